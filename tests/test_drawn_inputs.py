"""``grader.checks.drawn_inputs``: a value check's inputs kept on disk between processes, read
back exactly, and drawn again wherever an entry is missing, damaged or the cache is off."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from grader.checks import drawn_inputs

REPO = Path(__file__).resolve().parent.parent
# Prints a digest of the inputs the value checks of an exercise draw under seed 0, and the CPU
# seconds the drawing took, in a process of its own (each process draws once, then reuses).
DRAW = """
import hashlib, json, sys, time
from grader import find_exercise
from grader.checks.values import ValueProperty
from grader.checks import drawn_inputs
checks = [c for c in find_exercise(sys.argv[1]).checks if isinstance(c, ValueProperty)]
started = time.process_time()
drawn = [c.draw(0) for c in checks]
spent = time.process_time() - started
text = json.dumps([[drawn_inputs._encode(a) for a in inputs] for inputs in drawn], sort_keys=True)
print(hashlib.sha256(text.encode()).hexdigest(), spent)
"""


def _draw(slug: str, cache: Path) -> tuple[str, float]:
    env = {**os.environ, "JAXGRADE_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-c", DRAW, slug], capture_output=True, text=True, env=env, cwd=REPO,
                          check=True)
    digest, seconds = done.stdout.split()
    return digest, float(seconds)


@pytest.mark.parametrize("slug", ["named_sharding_replicated", "tensor_parallel_mlp"])
def test_a_later_process_reads_back_the_very_inputs_the_first_drew(slug: str, tmp_path: Path) -> None:
    first, _ = _draw(slug, tmp_path)
    entries = list((tmp_path / "drawn").glob("*.json"))
    assert entries, "the first process kept nothing"
    assert (tmp_path / "drawn").stat().st_mode & 0o777 == 0o700
    again, _ = _draw(slug, tmp_path)
    assert again == first
    elsewhere, _ = _draw(slug, tmp_path / "another")  # drawn afresh: Hypothesis gives the same inputs
    assert elsewhere == first


def test_a_damaged_entry_is_drawn_again_and_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAXGRADE_CACHE", str(tmp_path))
    slug = "named_sharding_replicated"
    first, _ = _draw(slug, tmp_path)
    (entry,) = (tmp_path / "drawn").glob("*.json")
    for damage in ("{not json", json.dumps([{"pickle": "gASV"}]), json.dumps([{"x": {"array": {"dtype": "|O",
                                                                                            "shape": [1], "b64": ""}}}])):
        entry.write_text(damage)
        assert drawn_inputs.load(entry.stem) is None
        again, _ = _draw(slug, tmp_path)
        assert again == first
        assert drawn_inputs.load(entry.stem) is not None, "the damaged entry was not replaced"


def test_nothing_is_kept_with_the_cache_off(tmp_path: Path) -> None:
    env = {**os.environ, "JAXGRADE_CACHE": "off", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    subprocess.run([sys.executable, "-c", DRAW, "named_sharding_replicated"], env=env, cwd=REPO, check=True,
                   capture_output=True)
    assert not list(tmp_path.rglob("*.json"))


def test_values_read_back_exactly_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAXGRADE_CACHE", str(tmp_path))
    kept = [{"x": np.arange(6, dtype=np.float32).reshape(2, 3), "a": np.float32(0.5), "n": 3, "flag": True,
             "params": {"w": np.ones((2, 2), np.int8), "b": (np.zeros(2), [1.5, float("nan")])}, "none": None}]
    drawn_inputs.store("exact", kept)
    back = drawn_inputs.load("exact")
    assert back is not None and drawn_inputs._same(kept[0], back[0])
    assert type(back[0]["a"]) is np.float32 and isinstance(back[0]["params"]["b"], tuple)
    drawn_inputs.store("transposed", [{"x": np.ones((2, 3), np.float32).T}])  # F-ordered: not kept
    drawn_inputs.store("object", [{"x": object()}])
    assert drawn_inputs.load("transposed") is None and drawn_inputs.load("object") is None
