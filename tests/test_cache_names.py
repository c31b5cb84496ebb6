"""The compilation cache confined children read names nothing of the hidden material (issue #24):
it is filled by grading the reference and the right/ and wrong/ variants, as grader/engine.py does,
and no entry, by its file name or its content (compressed or not), holds the reference's name, a
variant's file name or a path of the exercises."""
from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from grader.engine import warm_compile_cache, warm_compile_cache_from_variants


def _readable(entry: Path) -> bytes:
    raw = entry.read_bytes()
    try:
        return raw + zlib.decompress(raw)  # JAX compresses with zlib where zstandard is not installed
    except zlib.error:
        return raw


@pytest.mark.slow
def test_the_cache_children_read_names_no_reference_variant_or_exercise_path(seed_exercise, tmp_path, monkeypatch):
    monkeypatch.setenv("JAXGRADE_CACHE", str(tmp_path / "cache"))
    directory = warm_compile_cache(seed_exercise)
    warm_compile_cache_from_variants(seed_exercise, directory)
    entries = [p for p in Path(directory).rglob("*") if p.is_file()]
    assert len(entries) > 20  # the reference's programs and the variants' mistakes
    variants = [v.path for kind in ("right", "wrong") for v in seed_exercise.variants(kind)]
    secrets = {b"reference", str(seed_exercise.directory).encode(), str(seed_exercise.directory.parent).encode(),
               *(path.name.encode() for path in variants)}
    leaks = {(entry.name, secret) for entry in entries for secret in secrets
             if secret in entry.name.encode() or secret in _readable(entry)}
    assert not leaks, sorted(leaks)[:10]
