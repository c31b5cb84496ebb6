"""What earlier runs of ``jaxgrade validate`` concluded, so the next run regrades only what changed.

An author edits one wrong variant and validates again: every other grading would give the same
verdict, because a grading is deterministic given what it reads. So a verdict is kept under a
key made of everything it depends on:

- the exercise's own files, apart from its right/ and wrong/ variants (checks.py, reference.py,
  exercise.toml, the statement): a change there regrades every variant;
- the variant's bytes, its name and what it must do (full marks, or the category it must fail);
- the seed;
- the grader's own source files and the installed JAX and jaxlib (a new grader or JAX may judge
  otherwise, whatever its version string says).

Only verdicts that held (the variant behaved as declared) are kept: one that did not is graded
again next time, so a failure caused by a loaded machine (a time limit) is never kept. The
verdicts live in the grader's cache folder (``grader.cache.cache_root``), never in the user's
folder; ``jaxgrade validate --fresh`` ignores them.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from grader.cache import cache_root
from grader.authoring.exercise import Exercise
from grader.paths import PACKAGE as GRADER  # all of grader/, not this module's folder
MAX_KEPT = 4000  # verdicts per exercise: its variants under every seed, many edits over


@functools.lru_cache(maxsize=1)
def grader_digest() -> str:
    """The grader's source and the JAX it grades with, as one digest."""
    digest = hashlib.sha256()
    for path in sorted(GRADER.rglob("*.py")):
        digest.update(str(path.relative_to(GRADER)).encode() + b"\0" + path.read_bytes())
    for package in ("jax", "jaxlib"):
        try:
            digest.update(f"{package}={version(package)}".encode())
        except PackageNotFoundError:
            digest.update(f"{package}=none".encode())
    return digest.hexdigest()


def exercise_digest(exercise: Exercise) -> str:
    """The exercise's files other than its variants (what every grading of it reads)."""
    digest = hashlib.sha256()
    for name, path in exercise.files():  # its checks' helpers too: every grading reads them
        if name.split("/")[0] not in ("right", "wrong"):
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


class Verdicts:
    """The verdicts kept for one exercise: ``get`` one by its job, ``keep`` new ones, ``save``."""

    def __init__(self, exercise: Exercise, folder: Path) -> None:
        self.path = folder / f"{exercise.slug}.json"
        self.base = f"{grader_digest()}:{exercise_digest(exercise)}"
        try:
            stored = json.loads(self.path.read_text())
            self.stored: dict[str, dict[str, Any]] = stored if isinstance(stored, dict) else {}
        except (OSError, ValueError):
            self.stored = {}
        self.kept: dict[str, dict[str, Any]] = {}

    def key(self, path: str, name: str, expect: str, seed: int) -> str:
        digest = hashlib.sha256(self.base.encode())
        digest.update(f"\0{name}\0{expect}\0{seed}\0".encode() + Path(path).read_bytes())
        return digest.hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        found = self.stored.get(key)
        return found if isinstance(found, dict) else None

    def keep(self, key: str, verdict: dict[str, Any]) -> None:
        self.kept[key] = verdict

    def save(self) -> None:
        """Add this run's verdicts to those stored (the newest ``MAX_KEPT``: a verdict of a
        variant since edited is never asked for again, and ages out)."""
        merged = {k: v for k, v in self.stored.items() if k not in self.kept}
        merged.update(self.kept)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            partial.write_text(json.dumps(dict(list(merged.items())[-MAX_KEPT:])))
            os.replace(partial, self.path)
        except OSError:
            pass  # an unwritable cache only costs the next run its reuse


def verdicts_folder() -> Path | None:
    """Where verdicts are kept; None when the cache is off (``JAXGRADE_CACHE=off``)."""
    root = cache_root()
    return None if root is None else root / "validated"
