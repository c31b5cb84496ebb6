"""Shared fixtures. The compilation cache lives in a per-run temporary directory, so a test
run starts from nothing, like CI, and never touches the user's cache."""
from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import pytest

# The grader's environment as it was before any test imported JAX here (JAX's import sets
# variables of its own, which a child importing JAX sets too: those are not leaks).
GRADER_ENVIRONMENT = dict(os.environ)
os.environ.setdefault("JAXGRADE_CACHE", tempfile.mkdtemp(prefix="jaxgrade-test-cache-"))
os.environ.setdefault("NO_COLOR", "1")

REPO = Path(__file__).resolve().parent.parent
SEED_EXERCISE = REPO / "exercises" / "named_sharding_replicated"


@pytest.fixture(scope="session")
def seed_exercise():
    from grader.exercise import find_exercise
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
    from grader.exercise import find_exercise, load_exercise
    from grader.export import copy_exercise
    directory = copy_exercise(find_exercise("named_sharding_replicated"),
                              tmp_path_factory.mktemp("exercises") / "named_sharding_replicated")
    with open(directory / "exercise.toml", "a") as handle:
        handle.write(WITHHELD_VISIBILITY)
    return load_exercise(directory)
