"""Shared fixtures. The compilation cache lives in a per-run temporary directory, so a test
run starts from nothing, like CI, and never touches the user's cache."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("JAXGRADE_CACHE", tempfile.mkdtemp(prefix="jaxgrade-test-cache-"))
os.environ.setdefault("NO_COLOR", "1")

REPO = Path(__file__).resolve().parent.parent
SEED_EXERCISE = REPO / "exercises" / "named_sharding_replicated"


@pytest.fixture(scope="session")
def seed_exercise():
    from grader.exercise import find_exercise
    return find_exercise("named_sharding_replicated")
