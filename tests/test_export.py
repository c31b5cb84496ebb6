"""jaxgrade export: the Gradescope autograder zip, run for real against a fake /autograder tree
(and inside a simulated container without CAP_SYS_ADMIN, against a hostile submission); the
PrairieLearn question folder, whose run script grades a fake /grade tree and whose results.json
is read as PrairieLearn documents it; the student folder, which must hold no reference
solution, no known-wrong or right variants and no hidden check, and whose check script grades
the visible checks; and the GitHub Classroom and GitLab CI template repositories, whose CI files
are checked against GitHub's workflow schema (SchemaStore's github-workflow.json, in tests/data)
and GitLab's keywords, and whose grading commands run for real on right and wrong solutions."""
from __future__ import annotations

import json
import os
import hashlib
import re
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import sysconfig
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from conftest import WITHHELD_VISIBILITY
from grader.cli import main
from grader.errors import ExerciseError, ExportError
from grader.authoring.exercise import find_exercise, load_exercise
from grader.authoring.export.command import TARGETS
from grader.authoring.export import (copy_exercise, export_github_classroom, export_gitlab_ci, export_gradescope,
                           export_prairielearn, export_student, visible_checks_source)

REPO = Path(__file__).resolve().parent.parent
SLUG = "named_sharding_replicated"
EXERCISE_DIR = REPO / "exercises" / SLUG
WITHHELD = ("value.special_inputs", "structure.mesh")


@pytest.fixture(scope="module")
def exercise():
    return find_exercise(SLUG)


@pytest.fixture(scope="module")
def autograder_zip(exercise, tmp_path_factory) -> Path:
    return export_gradescope(exercise, tmp_path_factory.mktemp("zip") / "autograder.zip")


def _fake_autograder(zip_path: Path, root: Path) -> Path:
    """Lay the zip out as Gradescope does: contents in /autograder/source, run_autograder copied up."""
    from grader.authoring.export.gradescope import lay_out
    return lay_out(zip_path, root)


ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="Gradescope runs autograders as root, and run_autograder "
                                                          "refuses to grade without root (see test_gradescope_*)")


def _run_autograder(root: Path, **extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "JAXGRADE_AUTOGRADER_ROOT": str(root), "JAXGRADE_PYTHON": sys.executable, **extra}
    return subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)



@contextmanager
def full_temporary_directory(folder: Path) -> Iterator[Path]:
    """A temporary directory with room for one more file or folder, not two: the child's folder
    is made, the scratch folder inside it cannot be (a sandbox that cannot be set up)."""
    import ctypes
    folder.mkdir()
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.mount(b"tmpfs", str(folder).encode(), b"tmpfs", 0, b"size=1m,nr_inodes=2") == 0
    try:
        yield folder
    finally:
        libc.umount2(str(folder).encode(), 2)


# --- Gradescope -----------------------------------------------------------------------------------

def test_zip_holds_the_scripts_the_source_and_only_what_grading_needs(autograder_zip):
    """The source pip installs holds no exercise; the graded one, its key included, lies beside it."""
    with zipfile.ZipFile(autograder_zip) as archive:
        names = set(archive.namelist())
        modes = {i.filename: stat.S_IMODE(i.external_attr >> 16) for i in archive.infolist()}
        setup = archive.read("setup.sh").decode()
        run = archive.read("run_autograder").decode()
    assert {"setup.sh", "run_autograder", "jaxgrade/pyproject.toml", "jaxgrade/grader/report/render.py",
            "jaxgrade/templates/report.md.j2", f"exercises/{SLUG}/checks.py", f"exercises/{SLUG}/reference.py",
            f"exercises/{SLUG}/exercise.toml"} <= names
    assert [n for n in names if n.startswith("jaxgrade/exercises/")] == ["jaxgrade/exercises/README.txt"]
    assert {n.split("/")[1] for n in names if n.startswith("exercises/")} == {SLUG}
    assert 'JAXGRADE_EXERCISES="$SOURCE/exercises"' in setup and 'JAXGRADE_EXERCISES="$ROOT/source/exercises"' in run
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert not [n for n in names if "/wrong/" in n or "/right/" in n or "__pycache__" in n or n.startswith("tests/")]
    assert 'pip install -c "$SOURCE/jaxgrade/constraints.txt" "$SOURCE/jaxgrade"' in setup and "python3.11" in setup
    assert subprocess.run(["bash", "-n", "-c", setup]).returncode == 0


@pytest.mark.slow
def test_bundled_source_installs_the_templates_and_no_exercise(autograder_zip, tmp_path):
    """What setup.sh's pip install builds, minus downloading the dependencies: setuptools'
    build_py over the bundled source, reading its pyproject.toml, must lay out the package
    with the templates inside it and no exercise (the graded one stays beside the source)."""
    with zipfile.ZipFile(autograder_zip) as archive:
        archive.extractall(tmp_path / "source")
    done = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py",
                           "--build-lib", str(tmp_path / "lib")], cwd=tmp_path / "source" / "jaxgrade",
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    built = {str(p.relative_to(tmp_path / "lib")) for p in (tmp_path / "lib").rglob("*") if p.is_file()}
    assert {"grader/authoring/export/__init__.py", "grader/templates/report.html.j2"} <= built
    assert [p for p in built if p.startswith("grader/exercises/")] == ["grader/exercises/README.txt"]
    # pip builds it with the backend its pyproject.toml names, which must travel with it
    assert (tmp_path / "source" / "jaxgrade" / "build_backend" / "jaxgrade_build.py").is_file()


@pytest.mark.slow
@ROOT_ONLY
def test_run_autograder_grades_a_submission(autograder_zip, tmp_path):
    root = _fake_autograder(autograder_zip, tmp_path / "autograder")
    shutil.copy(EXERCISE_DIR / "wrong" / "structure_all_devices.py", root / "submission" / f"{SLUG}.py")
    (root / "submission" / "notes.txt").write_text("not code")
    # Mark the bundled templates, to prove run_autograder runs the bundled source.
    template = root / "source" / "jaxgrade" / "templates" / "gradescope_output.md.j2"
    template.write_text(template.read_text() + "\nbundled template in use\n")
    done = _run_autograder(root)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not any(line.lstrip().startswith(("{", "[")) for line in done.stdout.splitlines()), done.stdout
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 9 and results["output_format"] == "md" and results["execution_time"] > 0
    assert "bundled template in use" in results["output"]
    statuses = {t["extra_data"]["id"]: t["status"] for t in results["tests"]}
    assert len(statuses) == 9 and statuses["structure.mesh"] == "failed"
    assert all(t["status"] in ("passed", "failed") and t["visibility"] == "visible" for t in results["tests"])


HOSTILE_GRADER_PY = REPO / "tests" / "hostile" / "grader.py"


@pytest.mark.slow
@ROOT_ONLY
def test_run_autograder_never_imports_a_grader_py_from_the_working_directory(autograder_zip, tmp_path):
    """Gradescope may start run_autograder in the student's folder: a grader.py there is not
    what the root process imports as the grader."""
    root = _fake_autograder(autograder_zip, tmp_path / "autograder")
    shutil.copy(EXERCISE_DIR / "wrong" / "structure_all_devices.py", root / "submission" / f"{SLUG}.py")
    shutil.copy(HOSTILE_GRADER_PY, root / "submission" / "grader.py")
    env = {**os.environ, "JAXGRADE_AUTOGRADER_ROOT": str(root), "JAXGRADE_PYTHON": sys.executable}
    done = subprocess.run([str(root / "run_autograder")], cwd=root / "submission", env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (root / "submission" / "GRADER-PY-IMPORTED").exists()
    assert json.loads((root / "results" / "results.json").read_text())["score"] == 9  # graded, not forged


@ROOT_ONLY
def test_run_autograder_explains_a_missing_submission(autograder_zip, tmp_path):
    root = _fake_autograder(autograder_zip, tmp_path / "autograder")
    (root / "submission" / "README.md").write_text("forgot the code")
    done = _run_autograder(root)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and results["tests"] == []
    assert "No Python file was submitted" in results["output"] and f"{SLUG}.py" in results["output"]


def _assert_grader_fault(done: subprocess.CompletedProcess, root: Path, why: str) -> None:
    """No results.json (Gradescope: "The autograder failed to execute correctly", no score) and a
    message in the autograder output that says so and why."""
    assert done.returncode == 3, done.stdout[-3000:] + done.stderr[-3000:]
    assert not (root / "results" / "results.json").exists()
    assert "GRADER FAULT. Nothing was recorded for this submission." in done.stdout
    assert "No results.json was written" in done.stdout and why in done.stdout, done.stdout


def test_run_autograder_writes_no_results_when_the_grader_itself_fails(autograder_zip, tmp_path):
    """A broken grader must not record a score: Gradescope then flags the run for the instructor."""
    root = _fake_autograder(autograder_zip, tmp_path / "autograder")
    shutil.copy(EXERCISE_DIR / "reference.py", root / "submission" / f"{SLUG}.py")
    (root / "source" / "exercises" / SLUG / "exercise.toml").write_text("not = [toml")
    _assert_grader_fault(_run_autograder(root), root, "exercise.toml")


@ROOT_ONLY
def test_setup_closes_the_bundled_exercise_to_other_users(autograder_zip, tmp_path):
    """What setup.sh's last step runs: every copy of the secret files, found by content (here one
    the instructor left beside the zip's copy, under another name), closed and proven unreadable."""
    root = _fake_autograder(autograder_zip, tmp_path / "autograder")
    stray = root / "source" / "solution_backup.py"
    shutil.copy(EXERCISE_DIR / "reference.py", stray)
    stray.chmod(0o644)
    env = {**os.environ, "PYTHONPATH": str(root / "source" / "jaxgrade"),
           "JAXGRADE_EXERCISES": str(root / "source" / "exercises")}  # as setup.sh sets it
    # cwd: `python -m` puts it first on sys.path, and from the repository it would import (and lock) its own copy
    done = subprocess.run([sys.executable, "-m", "grader.authoring.export", "lock", "--root", str(root), "-e", SLUG],
                          env=env, cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "(3 copies) are closed to other users" in done.stdout
    exercise = root / "source" / "exercises" / SLUG
    assert not exercise.stat().st_mode & 0o007 and not stray.stat().st_mode & 0o007
    assert stat.S_IMODE((root / "source" / "exercises").stat().st_mode) & 0o005  # only the copies


@ROOT_ONLY
def test_run_autograder_records_nothing_when_the_sandbox_cannot_be_set_up(autograder_zip, tmp_path):
    """#14.1: a correct submission whose sandbox cannot be made used to get 0/10. The temporary
    directory has no room for the child's folder, so nothing can be graded."""
    root = _fake_autograder(autograder_zip, tmp_path / "autograder")
    shutil.copy(EXERCISE_DIR / "reference.py", root / "submission" / f"{SLUG}.py")
    with full_temporary_directory(tmp_path / "full") as full:
        _assert_grader_fault(_run_autograder(root, TMPDIR=str(full)), root, "sandbox could not be set up")


@pytest.mark.slow
@ROOT_ONLY
def test_run_autograder_records_nothing_when_a_check_cannot_be_judged(autograder_zip, tmp_path):
    """One check that raises (a bug in the grader) is a grader fault too: the other nine points must
    not become the student's score."""
    root = _fake_autograder(autograder_zip, tmp_path / "autograder")
    shutil.copy(EXERCISE_DIR / "reference.py", root / "submission" / f"{SLUG}.py")
    bundled = root / "source" / "exercises" / SLUG
    with open(bundled / "checks.py", "a") as checks:
        checks.write("\n\nfrom grader.checks.base import Check as _Check\n\n\n"
                     "class _Broken(_Check):\n    category = \"structure\"\n\n"
                     "    def judge(self, context):\n        raise RuntimeError(\"a bug in the grader\")\n\n\n"
                     "CHECKS.append(_Broken(id=\"structure.broken\", title=\"A check with a bug\"))\n")
    toml = (bundled / "exercise.toml").read_text()
    (bundled / "exercise.toml").write_text(toml.replace("[points]\n", "[points]\n\"structure.broken\" = 1\n"))
    _assert_grader_fault(_run_autograder(root), root, "a bug in the grader")


# --- Gradescope in an unprivileged container (#14.2) -------------------------------------------------
#
# Gradescope's containers run run_autograder as root with Docker's default capabilities: no
# CAP_SYS_ADMIN, so the sandbox can make no namespaces. The tests build such a container here:
# an autograder tree laid out as setup.sh leaves it (the bundled source, pip's build folder in
# it, a virtualenv holding an installed copy of jaxgrade with its exercises), run_autograder run
# under setpriv with exactly Docker's default capability set, in a mount namespace where the
# Python installation is reachable by other users as it is in an image (here it lives under
# /root, which only root may enter). The submission is hostile: it returns the right answers and
# tries to read and print the reference solution and to reach the network.

# Docker's default capability set (moby's defaults): what Gradescope's containers run with.
DOCKER_DEFAULT_CAPABILITIES = ("chown", "dac_override", "fsetid", "fowner", "mknod", "net_raw", "setgid", "setuid",
                               "setfcap", "setpcap", "net_bind_service", "sys_chroot", "kill", "audit_write")
CONTAINER_TOOLS = all(shutil.which(tool) for tool in ("unshare", "setpriv", "mount"))
CONTAINER = pytest.mark.skipif(os.geteuid() != 0 or not CONTAINER_TOOLS,
                               reason="simulating a container needs root, unshare, mount and setpriv")
REFERENCE_LINE = "placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))"

HOSTILE_SUBMISSION = """
import glob, importlib, os, socket, sys
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

ROOT = @ROOT@
PORT = @PORT@


def attempt(path):
    try:
        with open(path) as handle:
            text = handle.read()
    except OSError as error:
        print("blocked:", path, type(error).__name__)
        return
    if "def replicated_sharding_value" in text or "CHECKS" in text:
        print("LEAKED:", path)
        print(text)


places = [ROOT + "/source/exercises/named_sharding_replicated", ROOT + "/source/jaxgrade/exercises/named_sharding_replicated"]
places += glob.glob(ROOT + "/source/jaxgrade/build/lib*/grader/exercises/named_sharding_replicated")
for entry in sys.path:
    places.append(os.path.join(entry, "grader", "exercises", "named_sharding_replicated"))
for place in places:
    for name in ("reference.py", "checks.py"):
        attempt(os.path.join(place, name))
for folder, _, files in os.walk(ROOT):  # the whole autograder tree, virtualenv included
    for name in files:
        if name.startswith(("reference.", "checks.")):
            attempt(os.path.join(folder, name))
try:
    exercises = importlib.import_module("grader.exercises")
    print("imported grader.exercises from", list(exercises.__path__))
except Exception as error:
    print("blocked: import grader.exercises", type(error).__name__)
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=3).close()
    print("NETWORK REACHED")
except OSError as error:
    print("network blocked:", type(error).__name__, error)


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
"""


def _blocked_ancestor(path: Path) -> tuple[Path, str] | None:
    """The first folder on the way to ``path`` that other users may not enter, and the next step."""
    parts = path.resolve().parts
    for depth in range(2, len(parts)):
        folder = Path(*parts[:depth])
        if not folder.stat().st_mode & stat.S_IXOTH:
            return folder, parts[depth]
    return None


def _venv_installing(source: Path, venv: Path) -> Path:
    """A virtualenv at ``venv`` whose jaxgrade is a real (non-editable) install of the bundled
    ``source``, as the export's pip does; its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # JAX and the other dependencies come from this test run's environment (its site-packages,
    # added as a plain path: the editable install of the repository is not in it) ...
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # ... and jaxgrade is installed from the bundled source as pip does: setuptools builds it
    # inside the source (leaving build/), the built package is copied into site-packages and
    # compiled (pip's offline steps, done by hand).
    built = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build"],
                           cwd=source, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    shutil.copytree(source / "build" / "lib", site, dirs_exist_ok=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(site / "grader")], check=True, timeout=300)
    assert (site / "grader" / "exercises" / "README.txt").is_file()
    return site


@pytest.fixture
def container_root(autograder_zip):
    """An autograder tree as Gradescope's image holds it after setup.sh, in a folder other users
    may enter (like /autograder), with a virtualenv whose jaxgrade is a real (non-editable) install."""
    root = Path(tempfile.mkdtemp(prefix="jaxgrade-gradescope-", dir="/tmp"))
    root.chmod(0o755)
    try:
        _fake_autograder(autograder_zip, root)
        site = _venv_installing(root / "source" / "jaxgrade", root / "jaxgrade-venv")
        assert not (site / "grader" / "exercises" / SLUG).exists()  # the image's jaxgrade holds no exercise
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _container_env(root: Path, cache: Path | None = None) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "JAXGRADE_AUTOGRADER_ROOT": str(root),
            "JAXGRADE_CACHE": str(cache) if cache else "off", "NO_COLOR": "1", "HOME": str(root),
            "JAXGRADE_NO_DAEMON": "1"}


def _in_container(root: Path, *, user: int | None = None, timeout: int = 300, cache: Path | None = None,
                  command: list[str] | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """run_autograder (or ``command``) as Gradescope runs it, in a simulated container: root (or
    ``user``) with Docker's default capabilities only, in a mount namespace where Python is
    reachable by others."""
    python = _blocked_ancestor(Path(sys.base_prefix))
    expose = ""
    if python:  # tmpfs over the closed folder, holding only the way to Python (as confine does)
        folder, step = python
        expose = (f'stage=$(mktemp -d); mount --bind "{folder}/{step}" "$stage"; '
                  f'mount -t tmpfs -o mode=0755,size=1m tmpfs "{folder}"; mkdir "{folder}/{step}"; '
                  f'mount --move "$stage" "{folder}/{step}"; rmdir "$stage"; ')  # no empty folder left in /tmp
    capabilities = ",".join(f"+{c}" for c in DOCKER_DEFAULT_CAPABILITIES)
    who = f"--reuid={user} --regid={user} --clear-groups " if user is not None else ""
    run = " ".join(shlex.quote(part) for part in command or [f"{root}/run_autograder"])
    script = (f"set -e; {expose}cd {root}; exec setpriv --bounding-set=-all,{capabilities} --inh-caps=-all "
              f"{who}-- {run}")
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "bash", "-c", script],
                          env=env or _container_env(root, cache), capture_output=True, text=True, timeout=timeout)


# Run as the sandbox's uid in the container: every regular file under the roots it can open, and
# the size and SHA-256 of those whose size is one of the keys'.
READABLE_PROBE = """
import hashlib, json, os, sys
sizes = set(json.loads(sys.argv[1]))
readable, matches = 0, []
for top in sys.argv[2:]:
    for folder, _, files in os.walk(top):
        for name in files:
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as handle:
                    readable += 1
                    if os.path.getsize(path) in sizes:
                        matches.append([path, hashlib.sha256(handle.read()).hexdigest()])
            except OSError:
                pass
print(json.dumps({"readable": readable, "matches": matches}))
"""


def _every_key(graded: str) -> dict[str, str]:
    """SHA-256 → name of every answer key of the track (each exercise's reference and right/ and
    wrong/ variants, docs/keys.md) and of the graded exercise's checks.py, which may hold hidden checks."""
    from grader.authoring.exercise import KEY_PARTS
    keys = {}
    for exercise in sorted((REPO / "exercises").iterdir()):
        found = [p for part in KEY_PARTS for p in [exercise / part, *(exercise / part).glob("*")] if p.is_file()]
        if exercise.name == graded:
            found.append(exercise / "checks.py")
        keys.update({hashlib.sha256(p.read_bytes()).hexdigest(): str(p.relative_to(REPO)) for p in found})
    return keys


def _assert_no_key_readable(root: Path, roots: list[Path], env: dict[str, str] | None = None) -> None:
    """A process of the sandbox's uid (PROBE_UID: no account, no group, as a submission's child),
    in the simulated container, opens every file under ``roots``, the dependencies'
    site-packages and the Python installation: none holds any exercise's key."""
    from grader.sandbox.container import PROBE_UID
    keys = _every_key(SLUG)
    sizes = sorted({(REPO / name).stat().st_size for name in keys.values()})
    probe = Path(tempfile.mkdtemp(prefix="jaxgrade-probe-", dir="/tmp"))
    try:
        probe.chmod(0o755)
        (probe / "probe.py").write_text(READABLE_PROBE)
        (probe / "probe.py").chmod(0o644)
        tops = [*map(str, roots), sysconfig.get_paths()["purelib"], sys.base_prefix]
        done = _in_container(root, user=PROBE_UID, env=env, timeout=600,
                             command=[sys.executable, "-I", str(probe / "probe.py"), json.dumps(sizes), *tops])
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    found = json.loads(done.stdout)
    assert found["readable"] > 1000, found["readable"]  # it did read the container: JAX, the grader, Python
    leaked = [f"{path} (a copy of {keys[digest]})" for path, digest in found["matches"] if digest in keys]
    assert not leaked, leaked


@pytest.fixture
def listener():
    """A TCP server on the loopback the hostile submission tries to reach."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    yield server.getsockname()[1]
    server.close()


@pytest.mark.slow
@CONTAINER
def test_gradescope_without_cap_sys_admin_keeps_the_reference_from_a_hostile_submission(container_root, listener):
    root = container_root
    hostile = HOSTILE_SUBMISSION.replace("@ROOT@", repr(str(root))).replace("@PORT@", str(listener))
    (root / "submission" / f"{SLUG}.py").write_text(hostile)
    done = _in_container(root)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    results = json.loads((root / "results" / "results.json").read_text())
    everything = json.dumps(results) + done.stdout + done.stderr
    # the attack ran (its output is in the student's report) and read nothing
    assert "blocked:" in results["output"] and "network blocked:" in results["output"], results["output"]
    assert "LEAKED" not in everything and REFERENCE_LINE not in everything
    assert "NETWORK REACHED" not in everything
    assert results["score"] == 10  # the answers were right; only the attack failed
    # the namespaces really were impossible, and what stood in for them is said
    protections = results["extra_data"]["protections"]
    assert not protections["hidden_paths"]["active"] and not protections["network"]["active"]
    assert protections["user"]["active"] and protections["secrets"]["active"]
    assert protections["network_filter"]["active"]
    # what had no substitute is said loudly, to course staff only: extra_data and the autograder's
    # stdout (hidden from students), never a test (a hidden one would hide the student's total)
    missing = results["extra_data"]["missing_protections"]
    assert "temporary_files" in missing and "hidden_paths" not in missing and "network" not in missing
    assert "sandbox protection(s) MISSING in this container: " in done.stdout
    assert results["stdout_visibility"] == "hidden"
    assert [t["extra_data"]["id"] for t in results["tests"]] == list(find_exercise(SLUG).points)
    assert {t["visibility"] for t in results["tests"]} == {"visible"} and "sandbox" not in json.dumps(results["tests"])
    # the one copy of the exercise in the image is closed to other users, and no key of any
    # exercise is anywhere the submission's uid can read
    assert not (root / "source" / "exercises" / SLUG).stat().st_mode & 0o007
    _assert_no_key_readable(root, [root])


def _warm_cache_as_setup_does(root: Path, cache: Path) -> None:
    """setup.sh's step, as root when the image is built (under a strict umask, which JAX's files keep)."""
    python = root / "jaxgrade-venv" / "bin" / "python"
    done = subprocess.run(["bash", "-c", f'umask 077; exec "{python}" -P -s -m grader.authoring.export warm-cache -e {SLUG}'],
                          env={**_container_env(root, cache), "PYTHONPATH": str(root / "source" / "jaxgrade"),
                               "JAXGRADE_EXERCISES": str(root / "source" / "exercises")},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and str(cache) in done.stdout, done.stdout + done.stderr


PRINTING_SUBMISSION = (EXERCISE_DIR / "reference.py").read_text() + '\nprint("the student printed this")\n'


@pytest.mark.slow
@CONTAINER
def test_gradescope_students_see_what_they_printed_and_the_cache_is_readable_by_the_sandbox(container_root):
    """The cache setup.sh fills is the one run_autograder's children read: every entry readable
    (not writable) by an unprivileged uid, and nothing about the cache in what students see. The
    witness's own cache beside it (programs submissions handed over) and the value checks' drawn
    inputs (whoever writes them chooses what later checks run) are the grader's alone."""
    root, cache = container_root, container_root / "jaxgrade-cache"
    _warm_cache_as_setup_does(root, cache)
    private = [path for path in cache.glob("witness-*")] + [cache / "drawn"]
    entries = [path for path in cache.rglob("*") if path.is_file() and not any(w in path.parents for w in private)]
    assert len(entries) > 3
    (root / "submission" / f"{SLUG}.py").write_text(PRINTING_SUBMISSION)
    done = _in_container(root, cache=cache)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 10 and "the student printed this" in results["output"]
    assert "cache" not in results["output"] and "PermissionError" not in json.dumps(results), results["output"]
    probe = subprocess.run(["setpriv", "--reuid=61999", "--regid=61999", "--clear-groups", "--", "cat",
                            *map(str, entries)], capture_output=True, timeout=60)
    assert probe.returncode == 0, probe.stderr  # the sandbox's uid reads every entry
    for folder in private:  # but not what the witness compiled, nor the drawn inputs
        closed = subprocess.run(["setpriv", "--reuid=61999", "--regid=61999", "--clear-groups", "--", "ls", folder],
                                capture_output=True, timeout=60)
        assert closed.returncode != 0 and folder.stat().st_mode & 0o077 == 0, closed.stdout
    assert all(not path.stat().st_mode & 0o022 for path in [cache, *cache.rglob("*")])  # and writes none
    assert {path.stat().st_uid for path in cache.rglob("*")} == {0}  # the grader's alone: nothing planted


@pytest.mark.slow
@CONTAINER
def test_gradescope_students_never_see_the_cache_the_sandbox_cannot_read(container_root):
    """A cache behind a folder closed to other users (root's home, as before setup.sh moved it):
    JAX's "Error reading persistent compilation cache ... PermissionError" is the grader's
    concern, so it stays out of the student's output (it only costs speed)."""
    root = container_root
    closed = root / "root-home"
    closed.mkdir(mode=0o700)
    cache = closed / ".cache" / "jaxgrade"
    _warm_cache_as_setup_does(root, cache)
    (root / "submission" / f"{SLUG}.py").write_text(PRINTING_SUBMISSION)
    done = _in_container(root, cache=cache)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 10 and "the student printed this" in results["output"]
    assert "persistent compilation cache" not in results["output"] and "PermissionError" not in results["output"]


@pytest.mark.slow
@CONTAINER
def test_gradescope_as_an_unprivileged_user_refuses_to_grade(container_root):
    """Without root the submission would run as the grader's own user, which must read the
    reference and checks: run_autograder records nothing and says why."""
    root = container_root
    shutil.copy(EXERCISE_DIR / "reference.py", root / "submission" / f"{SLUG}.py")
    (root / "results").mkdir()
    (root / "results").chmod(0o777)
    _assert_grader_fault(_in_container(root, user=65534), root, "not root")


@pytest.mark.slow
@CONTAINER
def test_gradescope_fails_closed_when_a_copy_cannot_be_closed(container_root):
    """A copy of the reference that cannot be made private (here: on a read-only mount) means the
    submission could read it: nothing is graded."""
    root = container_root
    shutil.copy(EXERCISE_DIR / "reference.py", root / "submission" / f"{SLUG}.py")
    exercise = root / "source" / "exercises" / SLUG
    script = (f'mount --bind "{exercise}" "{exercise}" && mount -o remount,bind,ro "{exercise}" && '
              f'exec "{root}/run_autograder"')
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "bash", "-c", script],
                          env=_container_env(root), capture_output=True, text=True, timeout=300)
    _assert_grader_fault(done, root, "could not close the exercise's files to other users")


def test_cli_export_gradescope_wants_a_zip(tmp_path, capsys):
    assert main(["export", "gradescope", "-e", SLUG, "-o", str(tmp_path / "autograder.tar")]) == 2
    assert "Gradescope takes a .zip" in capsys.readouterr().err


def test_cli_exports_several_exercises_each_into_the_folder(tmp_path, capsys):
    out = tmp_path / "autograders"
    assert main(["export", "gradescope", "-e", SLUG, "-e", "sgd_step", "-e", SLUG, "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [f"{SLUG}.zip", "sgd_step.zip"]
    with zipfile.ZipFile(out / "sgd_step.zip") as archive:  # each holds its own exercise alone
        assert {n.split("/")[1] for n in archive.namelist() if n.startswith("exercises/")} == {"sgd_step"}
    assert main(["export", "gradescope", "-e", SLUG, "-e", "sgd_step", "-o", str(tmp_path / "both.zip")]) == 2
    assert "give -o a folder" in capsys.readouterr().err
    for neither_or_both in ([], ["-e", SLUG, "--all"]):
        assert main(["export", "student", *neither_or_both, "-o", str(tmp_path / "s")]) == 2
        assert "-e SLUG (repeat it for several), or give --all" in capsys.readouterr().err


@pytest.mark.parametrize("target", TARGETS)
def test_every_export_proves_itself_through_its_runner(target, tmp_path, capsys):
    """The reference, then a wrong variant, graded through what was written, as the platform runs it."""
    out = tmp_path / ("autograder.zip" if target == "gradescope" else "out")
    assert main(["export", target, "-e", SLUG, "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert "Proven through it: the reference: full marks; wrong/limits_crash.py: less than full marks" in said, said


def _exercise_reading_a_table(folder: Path, wrong: str, expect: str) -> Path:
    """The seed exercise whose checks.py reads a table beside it, with one wrong variant: ``wrong``'s
    code, expected to fail ``expect``."""
    copied = folder / SLUG
    shutil.copytree(EXERCISE_DIR, copied, ignore=shutil.ignore_patterns("__pycache__", "wrong"))
    (copied / "probe.json").write_text("[2.0, -1.0, 4.0, 0.5, -3.25, 7.0, 1.5]")
    checks = copied / "checks.py"
    checks.write_text(checks.read_text().replace(
        "PROBE = {\"x\": np.array([2.0, -1.0, 4.0, 0.5, -3.25, 7.0, 1.5], dtype=np.float32)}",
        "PROBE = {\"x\": np.array(json.loads((Path(__file__).parent / \"probe.json\").read_text()), dtype=np.float32)}")
        .replace("import numpy as np\n", "import json\nfrom pathlib import Path\n\nimport numpy as np\n"))
    (copied / "wrong").mkdir()
    (copied / "wrong" / f"{expect}_variant.py").write_text(f"# expect: {expect}\n" + wrong)
    return copied


def test_an_export_that_grades_wrongly_fails_its_proof_and_is_removed(tmp_path, monkeypatch, capsys):
    """A file checks.py reads beside it travels with the exercise (the reference gets full marks
    through the zip); a "wrong" variant that the export gives full marks stops the export: exit 2,
    the message names the variant and what it got, and no zip is left to upload."""
    monkeypatch.setenv("JAXGRADE_EXERCISES", str(tmp_path / "exercises"))
    copied = _exercise_reading_a_table(tmp_path / "exercises", (EXERCISE_DIR / "reference.py").read_text(), "value")
    out = tmp_path / "autograder.zip"
    assert main(["export", "gradescope", "-e", SLUG, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"wrong/value_variant.py of {SLUG} must get less than full marks through it, and got full marks" in err
    assert f"Removed {out}" in err and not out.exists()
    shutil.copy(EXERCISE_DIR / "wrong" / "value_mean.py", copied / "wrong" / "value_variant.py")
    assert main(["export", "gradescope", "-e", SLUG, "-o", str(out)]) == 0
    assert "wrong/value_variant.py: less than full marks" in capsys.readouterr().out
    assert f"exercises/{SLUG}/probe.json" in zipfile.ZipFile(out).namelist()


def test_all_exports_what_it_has_keys_for_and_names_the_rest(tmp_path, monkeypatch, capsys):
    """--all for an autograder: the exercises without their key are named with where the keys
    are, the others exported (exit 0); with none keyed, nothing is written (exit 2)."""
    keyless = tmp_path / "exercises" / "sgd_step"
    shutil.copytree(REPO / "exercises" / "sgd_step", keyless, ignore=shutil.ignore_patterns(
        "__pycache__", "reference.py", "right", "wrong"))
    shutil.copytree(EXERCISE_DIR, tmp_path / "exercises" / SLUG, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("JAXGRADE_EXERCISES", str(tmp_path / "exercises"))
    assert main(["export", "gradescope", "--all", "-o", str(tmp_path / "autograders")]) == 0
    out = capsys.readouterr().out
    assert "Skipped 1 exercise(s) without an answer key here: jaxgrade export gradescope needs the answer key " \
           f"(reference.py, right/, wrong/) of sgd_step, and {keyless} has none: write its reference.py there" in out, out
    assert [p.name for p in (tmp_path / "autograders").iterdir()] == [f"{SLUG}.zip"]
    shutil.rmtree(tmp_path / "exercises" / SLUG)
    assert main(["export", "gradescope", "--all", "-o", str(tmp_path / "none")]) == 2
    assert "answer key (reference.py, right/, wrong/) of sgd_step" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()


@pytest.mark.slow
def test_cli_exports_every_exercise_with_all(tmp_path):
    assert main(["export", "prairielearn", "--all", "--no-prove", "-o", str(tmp_path / "questions")]) == 0
    track = sorted(p.name for p in (REPO / "exercises").iterdir() if (p / "exercise.toml").is_file())
    assert sorted(p.name for p in (tmp_path / "questions").iterdir()) == track
    for slug in track:
        assert [p.name for p in (tmp_path / "questions" / slug / "tests" / "exercises").iterdir()] == [slug]


# --- PrairieLearn ---------------------------------------------------------------------------------

def _prairielearn_schema(definition: str):
    import jsonschema
    schema = json.loads((REPO / "tests" / "data" / "prairielearn.schema.json").read_text())
    return jsonschema.Draft202012Validator({**schema, "$ref": f"#/$defs/{definition}"})


@pytest.fixture(scope="module")
def prairielearn_question(exercise, tmp_path_factory) -> Path:
    return export_prairielearn(exercise, tmp_path_factory.mktemp("pl") / SLUG, image="course/jaxgrade-grader:0.1.0")


def test_prairielearn_export_is_a_question_folder(prairielearn_question):
    question = prairielearn_question
    files = {str(p.relative_to(question)) for p in question.rglob("*") if p.is_file()}
    assert {"info.json", "question.html", "starter.py", "tests/run.sh", f"tests/exercises/{SLUG}/checks.py",
            f"tests/exercises/{SLUG}/reference.py", "image/Dockerfile", "image/jaxgrade/pyproject.toml"} <= files
    assert not [f for f in files if "/wrong/" in f or "/right/" in f or "__pycache__" in f]
    info = json.loads((question / "info.json").read_text())
    _prairielearn_schema("info").validate(info)
    options = info["externalGradingOptions"]
    assert options["image"] == "course/jaxgrade-grader:0.1.0" and options["entrypoint"] == "/grade/tests/run.sh"
    assert options["enableNetworking"] is False and info["gradingMethod"] == "External"
    assert os.access(question / "tests" / "run.sh", os.X_OK)
    assert subprocess.run(["bash", "-n", str(question / "tests" / "run.sh")]).returncode == 0
    html = (question / "question.html").read_text()
    assert f'file-name="{SLUG}.py"' in html and 'source-file-name="starter.py"' in html
    assert "<pl-external-grader-results>" in html and "## Why it matters" in html
    # The image is public (PrairieLearn pulls only public images): no exercise may be inside it.
    reference_body = (EXERCISE_DIR / "reference.py").read_text().split("def ", 1)[1]
    assert reference_body not in _all_text(question / "image")
    assert not list((question / "image").rglob("checks.py")) and not list((question / "image").rglob("reference.py"))
    dockerfile = (question / "image" / "Dockerfile").read_text()
    assert "FROM prairielearn/grader-python" in dockerfile and "uv pip install" in dockerfile


@pytest.mark.slow
def test_prairielearn_image_source_installs_without_any_exercise(prairielearn_question, tmp_path):
    """What the Dockerfile's pip install builds (dependencies aside): the package and its
    templates, and an empty exercises folder."""
    done = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py",
                           "--build-lib", str(tmp_path / "lib")], cwd=prairielearn_question / "image" / "jaxgrade",
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    built = {str(p.relative_to(tmp_path / "lib")) for p in (tmp_path / "lib").rglob("*") if p.is_file()}
    assert {"grader/authoring/export/__init__.py", "grader/templates/check.txt.j2", "grader/templates/prairielearn_message.txt.j2"} <= built
    assert [p for p in built if p.startswith("grader/exercises/")] == ["grader/exercises/README.txt"]


def _fake_grade(question: Path, root: Path, submission: Path | None) -> Path:
    """Lay a grading job out as PrairieLearn's grader host does: the question's tests/ in /grade/tests,
    the student's files in /grade/student, data.json in /grade/data; no results folder."""
    shutil.copytree(question / "tests", root / "tests")
    (root / "student").mkdir()
    (root / "data").mkdir()
    (root / "data" / "data.json").write_text(json.dumps({"params": {}, "submitted_answers": {}}))
    if submission is not None:
        shutil.copy(submission, root / "student" / f"{SLUG}.py")
    return root


def _run_prairielearn(root: Path, **extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    from test_render import prairielearn_reads
    env = {**os.environ, "JAXGRADE_GRADE_ROOT": str(root), "JAXGRADE_PYTHON": sys.executable, **extra}
    env.pop("JAXGRADE_EXERCISES", None)
    done = subprocess.run(["bash", str(root / "tests" / "run.sh")], env=env, cwd=root, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done, prairielearn_reads((root / "results" / "results.json").read_text())


@pytest.mark.slow
@ROOT_ONLY
def test_prairielearn_run_script_grades_a_submission(prairielearn_question, tmp_path):
    root = _fake_grade(prairielearn_question, tmp_path / "grade", EXERCISE_DIR / "wrong" / "value_skips_first.py")
    with open(root / "tests" / "exercises" / SLUG / "exercise.toml", "a") as toml:
        toml.write(WITHHELD_VISIBILITY)  # one hidden check, one shown after the due date
    done, read = _run_prairielearn(root)
    assert read["gradable"] and read["score"] == 0.7  # every check counts, hidden ones too
    tests = read["results"]["tests"]
    assert [t["name"] for t in tests][-1] == "2 hidden checks" and len(tests) == 8
    text = json.dumps(read["results"])
    assert "value.special_inputs" not in text and "non-finite" not in text
    assert read["results"]["jaxgrade"]["protections"]["secrets"]["active"]
    assert not (root / "tests" / "exercises" / SLUG).stat().st_mode & 0o007  # closed to the submission's uid
    assert "protections for this submission" in done.stdout


@pytest.mark.slow
@CONTAINER
def test_prairielearn_container_exposes_no_key_to_the_submission(prairielearn_question):
    """The grader image as its Dockerfile builds it (jaxgrade installed from image/jaxgrade, whose
    copy is then removed), a grading job in /grade as PrairieLearn's host lays it out, run.sh run as
    root with Docker's default capabilities and no namespaces: the submission gets full marks, the
    exercise in /grade/tests is closed to other users, and no key of any exercise is anywhere the
    submission's uid can read."""
    from test_render import prairielearn_reads
    root = Path(tempfile.mkdtemp(prefix="jaxgrade-prairielearn-", dir="/tmp"))
    root.chmod(0o755)
    try:
        shutil.copytree(prairielearn_question / "image" / "jaxgrade", root / "opt" / "jaxgrade-src")
        site = _venv_installing(root / "opt" / "jaxgrade-src", root / "venv")
        shutil.rmtree(root / "opt")  # the Dockerfile's rm -rf /opt/jaxgrade-src
        assert not (site / "grader" / "exercises" / SLUG).exists()
        grade = _fake_grade(prairielearn_question, root / "grade", EXERCISE_DIR / "reference.py")
        env = {**_container_env(root), "JAXGRADE_GRADE_ROOT": str(grade),
               "JAXGRADE_PYTHON": str(root / "venv" / "bin" / "python")}
        done = _in_container(root, env=env, command=["bash", str(grade / "tests" / "run.sh")])
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        read = prairielearn_reads((grade / "results" / "results.json").read_text())
        assert read["gradable"] and read["score"] == 1.0, read
        assert read["results"]["jaxgrade"]["protections"]["secrets"]["active"]
        assert not (grade / "tests" / "exercises" / SLUG).stat().st_mode & 0o007
        _assert_no_key_readable(root, [root], env=env)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.slow
@ROOT_ONLY
def test_prairielearn_run_script_never_imports_a_grader_py_from_the_working_directory(prairielearn_question,
                                                                                     tmp_path):
    root = _fake_grade(prairielearn_question, tmp_path / "grade", EXERCISE_DIR / "wrong" / "value_skips_first.py")
    shutil.copy(HOSTILE_GRADER_PY, root / "student" / "grader.py")
    for decoy in ("jax", "numpy", "json", "tomllib", "hypothesis", "runpy"):  # modules the grader itself imports
        (root / "student" / f"{decoy}.py").write_text(HOSTILE_GRADER_PY.read_text())
    from test_render import prairielearn_reads
    env = {**os.environ, "JAXGRADE_GRADE_ROOT": str(root), "JAXGRADE_PYTHON": sys.executable}
    env.pop("JAXGRADE_EXERCISES", None)
    done = subprocess.run(["bash", str(root / "tests" / "run.sh")], env=env, cwd=root / "student",
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert not (root / "student" / "GRADER-PY-IMPORTED").exists()
    read = prairielearn_reads((root / "results" / "results.json").read_text())
    assert read["gradable"] and read["score"] < 1.0


def test_prairielearn_run_script_without_a_file_counts_no_attempt(prairielearn_question, tmp_path):
    root = _fake_grade(prairielearn_question, tmp_path / "grade", None)
    (root / "student" / "notes.txt").write_text("forgot the code")
    _, read = _run_prairielearn(root)
    assert not read["gradable"] and "No Python file was submitted" in read["format_errors"][0]


@pytest.mark.slow
@ROOT_ONLY
def test_prairielearn_run_script_counts_no_attempt_for_a_syntax_error(prairielearn_question, tmp_path):
    root = _fake_grade(prairielearn_question, tmp_path / "grade", EXERCISE_DIR / "wrong" / "load_syntax_error.py")
    _, read = _run_prairielearn(root)
    assert not read["gradable"] and "SyntaxError" in read["format_errors"][0]


@ROOT_ONLY
def test_prairielearn_grader_fault_counts_no_attempt(prairielearn_question, tmp_path):
    root = _fake_grade(prairielearn_question, tmp_path / "grade", EXERCISE_DIR / "reference.py")
    with full_temporary_directory(tmp_path / "full") as full:  # no room for the child: nothing can be graded
        done, read = _run_prairielearn(root, TMPDIR=str(full))
    assert not read["gradable"] and "the grader failed, not your code" in read["format_errors"][0]
    assert "sandbox could not be set up" in read["format_errors"][0] and "GRADER FAULT" in done.stdout


def test_cli_export_prairielearn(tmp_path, capsys):
    assert main(["export", "prairielearn", "-e", SLUG, "-o", str(tmp_path / "q")]) == 0
    assert "Build and push the grader image" in capsys.readouterr().out
    assert json.loads((tmp_path / "q" / "info.json").read_text())["externalGradingOptions"]["image"] == \
        "YOUR_REGISTRY_ACCOUNT/jaxgrade-grader:0.1.0"
    assert main(["export", "prairielearn", "-e", SLUG, "-o", str(tmp_path / "q")]) == 2  # not empty
    assert main(["export", "student", "-e", SLUG, "-o", str(tmp_path / "s"), "--image", "x/y"]) == 2


# --- student folder -------------------------------------------------------------------------------

def _all_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_student_export_has_no_solution_and_no_variants(exercise, tmp_path):
    out = export_student(exercise, tmp_path / "student")
    files = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert {"README.md", "statement.md", f"{SLUG}.py", "check"} <= files
    assert not [f for f in files if f.endswith("reference.py") or "/wrong/" in f or "/right/" in f]
    reference_body = (EXERCISE_DIR / "reference.py").read_text().split("def ", 1)[1]
    assert reference_body not in _all_text(out)
    assert (out / f"{SLUG}.py").read_text() == \
        (EXERCISE_DIR / "starter.py").read_text().replace("THIS_FILE.py", f"{SLUG}.py")
    assert os.access(out / "check", os.X_OK)


@pytest.mark.slow
def test_student_export_removes_hidden_checks_and_checks_the_visible_ones(hidden_exercise, tmp_path):
    out = export_student(hidden_exercise, tmp_path / "student")
    text = _all_text(out)
    for secret in (*WITHHELD, "FixedCases", "3e38", "special-casing", "MeshMatches", "non-finite vectors"):
        assert secret not in text, f"the student export leaks {secret!r}"
    assert "Your instructor grades 2 more checks" in (out / "README.md").read_text()
    shutil.copy(EXERCISE_DIR / "reference.py", out / f"{SLUG}.py")
    env = {k: v for k, v in os.environ.items() if k != "JAXGRADE_EXERCISES"}
    done = subprocess.run([sys.executable, str(out / "check")], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Score: 8/8 · all checks passed" in done.stdout  # the visible checks, and nothing is hidden here
    assert done.stdout.count("PASS ") == 7 and "hidden" not in done.stdout
    wrong = out / "wrong_try.py"
    shutil.copy(EXERCISE_DIR / "wrong" / "value_skips_first.py", wrong)
    done = subprocess.run([sys.executable, str(out / "check"), str(wrong)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "Score: 6/8" in done.stdout


def test_student_export_refuses_a_used_folder(exercise, tmp_path):
    (tmp_path / "student").mkdir()
    (tmp_path / "student" / "mine.py").write_text("x = 1\n")
    with pytest.raises(ExportError, match="not an empty folder"):
        export_student(exercise, tmp_path / "student")
    assert main(["export", "student", "-e", SLUG, "-o", str(tmp_path / "student")]) == 2


def test_visible_checks_source_drops_checks_and_what_only_they_use():
    source = '''
import numpy as np
from grader.checks import FixedCases, LoadsFunction, Case
SHARED = 3
SECRET_CASES = (Case(label="secret", code="[4e38]"),)
def secret_helper():
    return SECRET_CASES
CHECKS = [
    LoadsFunction(id="load.function", title=f"loads {SHARED}"),
    FixedCases(id="value.hidden", title="hidden", cases=secret_helper()),  # a comment about it
]
PROBE = np.zeros(SHARED)
'''
    out = visible_checks_source(source, {"load.function"}, "checks.py")
    assert "value.hidden" not in out and "SECRET_CASES" not in out and "secret_helper" not in out
    assert "4e38" not in out and "comment" not in out and "FixedCases" not in out and "Case" not in out
    assert "SHARED = 3" in out and "PROBE = np.zeros(SHARED)" in out and 'id="load.function"' in out.replace("'", '"')
    compile(out, "checks.py", "exec")
    with pytest.raises(ExportError, match="list literal"):
        visible_checks_source("CHECKS = BASE + []\n", set(), "checks.py")
    with pytest.raises(ExportError, match="literal id="):
        visible_checks_source("CHECKS = [make(1)]\n", set(), "checks.py")


def test_exercise_toml_rejects_bad_visibility(tmp_path):
    directory = copy_exercise(find_exercise(SLUG), tmp_path / SLUG)
    toml = (directory / "exercise.toml").read_text()
    (directory / "exercise.toml").write_text(toml + '\n[visibility]\n"load.function" = "secret"\n')
    with pytest.raises(ExerciseError, match="use one of visible, after_due_date, after_published, hidden"):
        load_exercise(directory)
    (directory / "exercise.toml").write_text(toml + '\n[visibility]\n"no.such" = "hidden"\n')
    with pytest.raises(ExerciseError, match="not a check"):
        load_exercise(directory)
    (directory / "exercise.toml").write_text(toml + '\n[release]\ndue = 2026-12-01\n')
    with pytest.raises(ExerciseError, match="UTC offset"):
        load_exercise(directory)


# --- CI template repositories (GitHub Classroom, GitLab CI) ---------------------------------------

# GitHub Actions' workflow schema from SchemaStore, unchanged (where from: github-workflow.SOURCE.txt beside it).
WORKFLOW_SCHEMA = REPO / "tests" / "data" / "github-workflow.json"
RIGHT, WRONG = EXERCISE_DIR / "right" / "jitted.py", EXERCISE_DIR / "wrong" / "value_skips_first.py"


@pytest.fixture(scope="module")
def classroom(exercise, tmp_path_factory) -> Path:
    return export_github_classroom(exercise, tmp_path_factory.mktemp("classroom") / SLUG)


@pytest.fixture(scope="module")
def gitlab(exercise, tmp_path_factory) -> Path:
    return export_gitlab_ci(exercise, tmp_path_factory.mktemp("gitlab") / SLUG)


def _workflow(repository: Path) -> dict:
    import yaml
    return yaml.safe_load((repository / ".github" / "workflows" / "classroom.yml").read_text())


def _validate_workflow(workflow: dict) -> None:
    import jsonschema
    jsonschema.Draft7Validator(json.loads(WORKFLOW_SCHEMA.read_text())).validate(workflow)


def _shell(command: str, cwd: Path, bin: Path = Path(sys.executable).parent,
           **env: str) -> subprocess.CompletedProcess:
    """A CI step's command in bash, where ``python`` is ``bin``'s (default: this venv's, jaxgrade
    installed) and CI is set, as on GitHub's and GitLab's runners."""
    path = f"{bin}{os.pathsep}{os.environ['PATH']}"
    environ = {**{k: v for k, v in os.environ.items() if k != "JAXGRADE_EXERCISES"}, "PATH": path, "CI": "true", **env}
    return subprocess.run(["bash", "-e", "-c", command], cwd=cwd, env=environ, capture_output=True, text=True,
                          timeout=600)


def _template_files(repository: Path) -> set[str]:
    return {str(p.relative_to(repository)) for p in repository.rglob("*")
            if p.is_file() and ".jaxgrade/jaxgrade/" not in str(p.relative_to(repository)) + "/"}


def test_github_classroom_template_is_a_repository_with_a_valid_workflow(classroom):
    files = _template_files(classroom)
    assert {".github/workflows/classroom.yml", "README.md", f"{SLUG}.py", "check", "constraints.txt",
            f".jaxgrade/exercises/{SLUG}/checks.py"} <= files
    assert (classroom / ".jaxgrade" / "jaxgrade" / "pyproject.toml").is_file()  # the source the job installs
    reference_body = (EXERCISE_DIR / "reference.py").read_text().split("def ", 1)[1]
    assert reference_body not in _all_text(classroom) and not list(classroom.rglob("reference.py"))
    assert (classroom / "README.md").read_text().startswith((EXERCISE_DIR / "statement.md").read_text().rstrip())
    workflow = _workflow(classroom)
    _validate_workflow(workflow)
    # the names Classroom's reporter requires, or it uploads no points; actions on a supported node runtime
    assert workflow["name"] == "Autograding Tests" and list(workflow["jobs"]) == ["run-autograding-tests"]
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    assert [s["uses"] for s in steps[:2]] == ["actions/checkout@v5", "actions/setup-python@v6"]
    runs = [s["run"] for s in steps if "run" in s]
    assert runs == ["python -m pip install -c constraints.txt ./.jaxgrade/jaxgrade", "python check --format classroom"]
    grading = next(s for s in steps if s.get("run", "").startswith("python check"))
    reporter = steps[-1]
    assert reporter["uses"] == "classroom-resources/autograding-grading-reporter@v1"
    assert reporter["with"]["runners"] == grading["id"] == "jaxgrade"  # the reporter's runner is the grading step
    assert reporter["env"] == {"JAXGRADE_RESULTS": "${{ steps.jaxgrade.outputs.result }}"}
    assert "!cancelled()" in reporter["if"]  # also after a grading without full marks (exit 1)


@pytest.mark.parametrize("break_it", [
    lambda w: w["jobs"]["run-autograding-tests"].pop("runs-on"),
    lambda w: w["jobs"]["run-autograding-tests"]["steps"][0].update(run="echo", uses="actions/checkout@v5"),
    lambda w: w.update(permissions={"classroom": "write"}),
])
def test_the_workflow_schema_is_not_a_rubber_stamp(classroom, break_it):
    import jsonschema
    workflow = _workflow(classroom)
    break_it(workflow)
    with pytest.raises(jsonschema.ValidationError):
        _validate_workflow(workflow)


@pytest.mark.slow
@pytest.mark.parametrize("variant, points", [(RIGHT, (10, 10)), (WRONG, (7, 10))])
def test_classroom_records_the_points_jaxgrade_check_gives(classroom, tmp_path, variant, points):
    """The workflow's grading step, run as the runner runs it, and its result read as the reporter
    reads it (tests/test_render.py reproduces the reporter's decoding from its source): the same
    points per check, and the same total, as jaxgrade check --format json on the same file."""
    from test_render import classroom_reporter_reads, points_per_check, step_outputs
    repository = tmp_path / "repository"
    shutil.copytree(classroom, repository, symlinks=True)
    shutil.copy(variant, repository / f"{SLUG}.py")
    (tmp_path / "output").write_text(""), (tmp_path / "summary.md").write_text("")
    steps = _workflow(repository)["jobs"]["run-autograding-tests"]["steps"]
    grading = next(s for s in steps if s.get("id") == "jaxgrade")
    done = _shell(grading["run"], repository, GITHUB_OUTPUT=str(tmp_path / "output"),
                  GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))
    assert done.returncode == (0 if points[0] == points[1] else 1), done.stdout[-3000:] + done.stderr[-3000:]
    outputs = step_outputs((tmp_path / "output").read_text())
    read = classroom_reporter_reads("jaxgrade", {"JAXGRADE_RESULTS": outputs["result"]})
    checked = json.loads(_shell(f"jaxgrade check {SLUG}.py -e {SLUG} --format json", repository).stdout)
    assert read["points"] == points == (checked["score"], checked["max_score"]) and read["logged"] == [points[0]]
    assert points_per_check(read["results"][0]) == {c["id"]: c["score"] for c in checked["checks"]}
    assert read["failed"] == (None if points[0] == points[1] else "Some tests failed.")
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("# jaxgrade · ") and f"**Score: {points[0]}/{points[1]}**" in summary
    assert f"::error file={SLUG}.py," in done.stdout or points[0] == points[1]  # annotations on the file


def _gitlab_job(repository: Path) -> dict:
    import yaml
    return yaml.safe_load((repository / ".gitlab-ci.yml").read_text())["jaxgrade"]


def test_gitlab_ci_template_declares_the_junit_report_and_the_score(gitlab):
    files = _template_files(gitlab)
    assert {".gitlab-ci.yml", "README.md", f"{SLUG}.py", "check", "constraints.txt"} <= files
    job = _gitlab_job(gitlab)
    assert set(job) <= {"image", "variables", "cache", "script", "allow_failure", "coverage", "artifacts"}
    assert job["artifacts"]["when"] == "always" and job["allow_failure"] == {"exit_codes": [1]}
    report = job["artifacts"]["reports"]["junit"]
    grading = [line for line in job["script"] if "check" in line.split()]
    assert grading == [f"python check --format gitlab -o {report}"]  # one grading, into the declared file
    assert job["image"].startswith("python:3.")


@pytest.mark.slow
def test_gitlab_ci_script_writes_the_junit_it_declares_and_logs_the_score(gitlab, tmp_path):
    repository = tmp_path / "repository"
    shutil.copytree(gitlab, repository, symlinks=True)
    shutil.copy(WRONG, repository / f"{SLUG}.py")
    job = _gitlab_job(repository)
    script = [line for line in job["script"] if "pip install" not in line]  # jaxgrade is installed here
    done = _shell("\n".join(script), repository)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # allowed: graded, not full marks
    junit = ET.parse(repository / job["artifacts"]["reports"]["junit"]).getroot()
    cases = junit.findall(".//testcase")
    assert len(cases) == 9 and len(junit.findall(".//testcase/failure")) == 2
    assert {c.get("file") for c in cases} == {f"{SLUG}.py"}  # GitLab links each test to the file
    log = done.stdout + done.stderr
    found = re.compile(job["coverage"].strip("/"), re.MULTILINE).findall(log)
    assert found and found[-1] == "70.0"  # GitLab's coverage: the last match in the log
    assert "jaxgrade: score 7/10 (70.0%) · some checks failed" in log


def test_cli_exports_the_whole_catalogue_and_wants_one_of_e_or_all(tmp_path, capsys):
    from grader.authoring.exercise import all_exercises
    assert main(["export", "student", "--all", "--no-prove", "-o", str(tmp_path / "all")]) == 0
    slugs = [e.slug for e in all_exercises()]
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == slugs
    assert all((tmp_path / "all" / slug / "check").is_file() for slug in slugs)
    assert capsys.readouterr().out.count("Wrote ") == len(slugs)
    assert main(["export", "gitlab-ci", "-o", str(tmp_path / "none")]) == 2
    assert main(["export", "gitlab-ci", "--all", "-e", SLUG, "-o", str(tmp_path / "both")]) == 2
    assert "with -e SLUG (repeat it for several), or give --all" in capsys.readouterr().err
    assert main(["export", "github-classroom", "-e", SLUG, "-o", str(tmp_path / "gh")]) == 0
    assert "GitHub Classroom" in capsys.readouterr().out and (tmp_path / "gh" / ".github").is_dir()


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory) -> Path:
    """A new virtual environment with pip and nothing else: where a CI job's commands start."""
    venv = tmp_path_factory.mktemp("ci-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    return venv / "bin"


@pytest.mark.slow
def test_every_ci_command_grades_in_a_fresh_venv(classroom, gitlab, fresh_venv, tmp_path):
    """A student's repository from each template, every command of its CI file in order, in a
    virtual environment that had only pip: the bundled jaxgrade installed with constraints.txt,
    then the one grading. Classroom records the points and GitLab reads the JUnit of jaxgrade check."""
    from test_render import classroom_reporter_reads, step_outputs
    github = tmp_path / "github"
    shutil.copytree(classroom, github, symlinks=True)
    shutil.copy(WRONG, github / f"{SLUG}.py")
    (tmp_path / "output").write_text("")
    for step in _workflow(github)["jobs"]["run-autograding-tests"]["steps"]:
        if "run" in step:
            done = _shell(step["run"], github, fresh_venv, GITHUB_OUTPUT=str(tmp_path / "output"))
            expected = 1 if step.get("id") == "jaxgrade" else 0  # 1: graded, not full marks
            assert done.returncode == expected, done.stdout[-3000:] + done.stderr[-3000:]
    result = step_outputs((tmp_path / "output").read_text())["result"]
    read = classroom_reporter_reads("jaxgrade", {"JAXGRADE_RESULTS": result})
    assert read["points"] == (7, 10)
    lab = tmp_path / "gitlab"
    shutil.copytree(gitlab, lab, symlinks=True)
    shutil.copy(WRONG, lab / f"{SLUG}.py")
    job = _gitlab_job(lab)
    done = _shell("\n".join(job["script"]), lab, fresh_venv)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    junit = ET.parse(lab / job["artifacts"]["reports"]["junit"]).getroot()
    assert len(junit.findall(".//testcase")) == 9 and len(junit.findall(".//testcase/failure")) == 2
