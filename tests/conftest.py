"""Shared fixtures. The compilation cache lives in a per-run temporary directory, so a test
run starts from nothing, like CI, and never touches the user's cache."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

# The grader's environment as it was before any test imported JAX here (JAX's import sets
# variables of its own, which a child importing JAX sets too: those are not leaks).
GRADER_ENVIRONMENT = dict(os.environ)
os.environ.setdefault("JAXGRADE_CACHE", tempfile.mkdtemp(prefix="jaxgrade-test-cache-"))
os.environ.setdefault("NO_COLOR", "1")
# No test starts a warm grading service (grader.warm) by checking a file: only tests/test_warm.py
# asks for one, each in a runtime folder of its own that it cleans up.
os.environ.setdefault("JAXGRADE_NO_DAEMON", "1")

REPO = Path(__file__).resolve().parent.parent
SEED_EXERCISE = REPO / "exercises" / "named_sharding_replicated"
# The interpreter this venv was made from: given folders of JAX through PYTHONPATH, a user
# site-packages or a venv of its own, it grades as an install of that kind would.
BASE_PYTHON = str(Path(sys.base_exec_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}")


def dependencies_into(site: Path) -> None:
    """Every package of this venv but jaxgrade, linked into ``site``: the grader's dependencies
    where an install of another kind puts them (a ``--target`` folder, a user site-packages,
    another venv), without installing them again."""
    import sysconfig
    site.mkdir(parents=True, exist_ok=True)
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(("__editable__", "jaxgrade-", "__pycache__")) and entry.suffix != ".pth":
            (site / entry.name).symlink_to(entry)


def base_python_without_jax() -> str:
    """:data:`BASE_PYTHON`, which must not import JAX by itself (else it would not tell an
    install that gives it JAX apart from one that does not); the test skips otherwise."""
    if sys.prefix == sys.base_prefix or not os.access(BASE_PYTHON, os.X_OK):
        pytest.skip("the tests do not run in a venv: no interpreter without JAX to try other installs with")
    alone = subprocess.run([BASE_PYTHON, "-c", "import jax"], capture_output=True, env={"PATH": "/usr/bin:/bin"})
    if alone.returncode == 0:
        pytest.skip(f"{BASE_PYTHON} imports JAX by itself: it would not tell the installs apart")
    return BASE_PYTHON


@pytest.fixture(scope="session")
def seed_exercise():
    from grader.authoring.exercise import find_exercise
    return find_exercise("named_sharding_replicated")


@pytest.fixture
def ctrl_c_reaches_children():
    """Ctrl-C as a terminal sends it, whatever started the tests: a shell without job control
    starts a background command with SIGINT ignored, the processes it starts inherit that, and
    a Python started so never raises KeyboardInterrupt (`make test &` would fail the tests
    that interrupt a run). A handler (not SIG_IGN) is reset to the default in a child."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


# Two checks withheld from students: one hidden, one shown only after the due date.
WITHHELD_VISIBILITY = '\n[visibility]\n"value.special_inputs" = "hidden"\n"structure.mesh" = "after_due_date"\n'


@pytest.fixture(scope="module")
def hidden_exercise(tmp_path_factory):
    """A copy of the seed exercise with a [visibility] table, graded for real by the engine."""
    from grader.authoring.exercise import find_exercise, load_exercise
    from grader.authoring.export import copy_exercise
    directory = copy_exercise(find_exercise("named_sharding_replicated"),
                              tmp_path_factory.mktemp("exercises") / "named_sharding_replicated")
    with open(directory / "exercise.toml", "a") as handle:
        handle.write(WITHHELD_VISIBILITY)
    return load_exercise(directory)


def exercise_with_checks(slug: str, checks: str, points: str, folder: Path):
    """A copy of the catalogue's exercise ``slug`` in ``folder`` with ``checks`` (Python source)
    added to its checks.py and ``points`` (TOML lines) to its [points], loaded: the check
    library's tests judge their checks on a real exercise, graded by the real engine."""
    from grader.authoring.exercise import find_exercise, load_exercise
    from grader.authoring.export import copy_exercise
    directory = copy_exercise(find_exercise(slug), folder / slug)
    with open(directory / "checks.py", "a") as handle:
        handle.write(checks)
    with open(directory / "exercise.toml", "a") as handle:  # [points] is its last table
        handle.write(points)
    return load_exercise(directory)


@contextmanager
def checks_judged(folder: Path, header: str, signature: Any, probe: dict[str, Any]) -> Iterator[Callable[..., Any]]:
    """``judge(check, body)``: ``check`` judged on a submission ``header`` + ``body`` defining
    ``f`` over ``probe``'s parameters, loaded in a real sandboxed child with 8 simulated devices,
    as during grading but without the other checks (the check library's tests of one check)."""
    from grader.checks import Context
    from grader.observe.session import Session
    from grader.sandbox.limits import Limits
    sessions: list[Any] = []

    def judge(check: Any, body: str) -> Any:
        path = folder / f"case{len(sessions)}.py"
        path.write_text(header + "\n\n" + textwrap.dedent(body))
        session = Session(path, "f", tuple(probe), 8, Limits(call_s=30, total_s=90))
        sessions.append(session)
        assert session.load().ok, session.load().detail
        return check.judge(Context(session, signature, probe, 0, "f", path.stem, 8))

    try:
        yield judge
    finally:
        for session in sessions:
            session.close()
