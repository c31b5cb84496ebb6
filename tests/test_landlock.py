"""grader/child/landlock.py: where the grader is not root, its child and its witness run as the
grader's own user, and Landlock keeps them from writing that user's files (a CI runner's
$GITHUB_OUTPUT, the grader's output), from TCP, and from signalling the grader.

Real gradings by a grader that runs as an unprivileged user (``setpriv`` from this root test
process), observed from outside."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from grader.child import landlock

NOBODY = 65534


def _python_for_nobody() -> str | None:
    """A Python of this version the unprivileged user may run (this one may live under /root)."""
    for candidate in (sys.executable, f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"):
        real = os.path.realpath(candidate)
        folders = [str(p) for p in Path(real).parents]
        if os.path.exists(real) and all(os.stat(f).st_mode & 0o001 for f in folders) and os.stat(real).st_mode & 0o001:
            return candidate
    return None


PYTHON = _python_for_nobody()
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None or landlock.version() < 1
                                or PYTHON is None, reason="needs root (to run a grader as another user), setpriv, "
                                                          "a Python that user may run and a kernel with Landlock")
HOSTILE = '''
import os
import signal
import socket

import jax.numpy as jnp

TARGET = {target!r}


def placed_sum(x):
    tried = []
    try:
        with open(TARGET, "a") as forged:  # a runner's file-command file, the grader's user's
            forged.write("result=forged\\n")
        tried.append("wrote")
    except OSError:
        tried.append("write refused")
    try:
        os.kill({grader}, signal.SIGTERM)
        tried.append("signalled")
    except OSError:
        tried.append("signal refused")
    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1)
    except OSError:
        pass
    with open("mine.txt", "w") as own:  # its own scratch stays writable
        own.write("ok")
    with open("/tmp/also-mine.txt", "w") as own:
        own.write("ok")
    print(" ".join(tried))
    return jnp.sum(x)
'''
GRADE = '''
import json, sys
import numpy as np
from pathlib import Path
from grader.observe.session import Session
from grader.sandbox.limits import Limits

from grader.cache import compile_cache_directory
session = Session(Path(sys.argv[1]), "placed_sum", ("x",), 1, Limits(call_s=60, total_s=180), compile_cache_directory())
try:
    assert session.load().ok, session.load().detail
    returned = session.call({"x": np.arange(4, dtype=np.float32)}, record="full")
    witness = session._witness()._process.protections
    child = session._child.protections
finally:
    output = session.close()
print(json.dumps({"ok": returned.ok, "witnessed": session.witnessed.status, "child": child["landlock"],
                  "witness": witness["landlock"], "user": child["user"]["active"],
                  "witness_cache": witness.get("witness_cache"), "printed": output["head"]}))
'''


@pytest.fixture
def nobodys() -> Iterator[Path]:
    """A folder of the unprivileged user's own (pytest's tmp_path is root's alone), outside the
    temporary folders, which the child sees empty where it has a mount namespace (a hosted
    runner's _temp is under the runner's home)."""
    folder = Path(tempfile.mkdtemp(prefix="jaxgrade-landlock-", dir="/var/cache"))
    os.chown(folder, NOBODY, NOBODY)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _grade_as_nobody(home: Path, solution: str, cache: str) -> dict:
    """``solution`` graded (one full record, witnessed) by a grader running as nobody."""
    (home / "solution.py").write_text(solution)
    (home / "grade.py").write_text(GRADE)
    temporary = home / "tmp"
    temporary.mkdir(exist_ok=True)
    for path in (home, home / "solution.py", home / "grade.py", temporary):
        os.chown(path, NOBODY, NOBODY)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "TMPDIR": str(temporary), "JAXGRADE_CACHE": cache,
           "PYTHONPATH": os.pathsep.join((str(Path(__file__).resolve().parent.parent), sysconfig.get_paths()["purelib"],
                                          sysconfig.get_paths()["platlib"]))}
    done = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", PYTHON,
                           str(home / "grade.py"), str(home / "solution.py")], capture_output=True, text=True,
                          env=env, cwd=home, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_child_and_witness_of_an_unprivileged_grader_cannot_write_its_files(nobodys: Path) -> None:
    home = nobodys / "grader-home"
    runner = home / "_runner_file_commands"
    runner.mkdir(parents=True)
    target = runner / "set_output"
    target.write_text("before\n")
    for path in (runner, target):
        os.chown(path, NOBODY, NOBODY)
    found = _grade_as_nobody(home, HOSTILE.format(target=str(target), grader=os.getpid()), "off")
    assert found["ok"] and found["witnessed"] == "reproduced", found
    assert found["child"]["active"] and found["witness"]["active"], found
    assert not found["user"]  # the grader's own user: only Landlock stands between it and the file
    assert "write refused" in found["printed"] and "signal refused" in found["printed"], found["printed"]
    assert target.read_text() == "before\n"


def test_a_witness_of_an_unprivileged_grader_reads_its_cache_where_it_cannot_write_there(nobodys: Path) -> None:
    """Without root a confined witness keeps the witness cache only where Landlock leaves it, and
    every child, nothing writable but their scratch: then it compiles nothing the reference's
    witnesses compiled, and writes nothing there."""
    home = nobodys / "grader-home"
    home.mkdir()
    cache = nobodys / "cache"
    cache.mkdir()
    os.chown(cache, NOBODY, NOBODY)
    honest = "import jax.numpy as jnp\n\ndef placed_sum(x):\n    return jnp.sum(x)\n"
    found = _grade_as_nobody(home, honest, str(cache))
    assert found["ok"] and found["witnessed"] == "reproduced", found
    assert found["witness_cache"]["active"] and "read-only to it" in found["witness_cache"]["detail"], found
    written = sorted(p.relative_to(cache) for p in cache.rglob("*") if p.is_file() and "witness" in str(p))
    assert written == []  # a confined witness wrote nothing (the reference's witnesses, unconfined, fill it)
