"""``jaxgrade explain FILE -e SLUG`` (grader.authoring.explain): a solution's probe call run in the
sandboxed child as grading runs it, and what the structure checks observe of it printed: the
program's nodes as a Predicate reads them (by meaning, with dtypes and the blocks a shard_map body
reads), the placements, the jitted calls and what XLA ran, as text or as JSON."""
from __future__ import annotations

import json

from conftest import REPO
from grader.cli import main

SHIFT = REPO / "exercises" / "pipeline_shift"


def test_explain_prints_the_program_and_the_record_the_checks_read(capsys) -> None:
    assert main(["explain", str(SHIFT / "reference.py"), "-e", "pipeline_shift"]) == 0
    out = capsys.readouterr().out
    assert "[0] ppermute  within jit/shard_map\n        reads %0:float32[1, 16] -> %1:float32[1, 16]" in out, out
    assert "inputs x = %0:float32[8, 16]" in out  # the argument whole; the body reads one row per device
    assert "shard_map_in:" in out and '"spec": ["stage"]' in out
    assert "collective-permute 64 B x1" in out  # one row of 16 float32 per device


def test_explain_json_holds_every_field_a_predicate_reads(capsys) -> None:
    assert main(["explain", str(SHIFT / "reference.py"), "--json"]) == 0  # the exercise found from the function
    seen = json.loads(capsys.readouterr().out)
    assert set(seen) == {"returned", "program", "traced", "placements", "probe", "calls", "devices"}
    permute = next(n for n in seen["program"]["nodes"] if n["primitive"] == "ppermute")
    assert permute["operation"] == "ppermute" and permute["within"] == ["jit", "shard_map"]
    assert permute["input_avals"] == [{"shape": [1, 16], "dtype": "float32"}]


def test_explain_says_why_nothing_is_observed(tmp_path, capsys) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def pipeline_shift(x):\n    raise ValueError('not yet')\n")
    assert main(["explain", str(broken), "-e", "pipeline_shift"]) == 1
    assert "observe nothing of" in capsys.readouterr().out
