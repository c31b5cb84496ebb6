"""JAXGRADE_TIMINGS=1 (grader/timings.py): `jaxgrade check`, run as a real subprocess, prints where its
wall time went to stderr after the report, and nothing else changes; what the child reports of its
time is the submission's process talking, so it can only turn a figure into "?"."""
from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from conftest import REPO, SEED_EXERCISE
from grader.timings import Timings, number

JAXGRADE = [sys.executable, "-m", "grader"]
HEADER = "jaxgrade timings (seconds; JAXGRADE_TIMINGS=1, docs/performance.md):"
LINE = re.compile(r"^ *(\d+\.\d{3}|\?)  ( *)(\S.*)$")
PHASES = ("parent: Python's start", "parent: imports", "parent: finding the exercise, until the child is spawned",
          "child start: spawned", "child: spawn -> its first line of code", "child: imports the grader's child modules",
          "child: imports JAX", "child: patches, recorder, confinement",
          "child: backend start (jax.devices(), 8 simulated",
          "loading the submission", "in the child: running the file", "closing the child", "rendering the report",
          "other (between the phases above)", "wall: process start -> this breakdown")
CHECKS = ("load.function", "type.float32_scalar", "value.random_vectors", "value.special_inputs", "structure.placed",
          "structure.sum_of_placed", "limits.resources")


def check(submission: Path, timings: bool) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {k: v for k, v in os.environ.items() if k != "JAXGRADE_TIMINGS"}
    env.update(NO_COLOR="1", **({"JAXGRADE_TIMINGS": "1"} if timings else {}))
    started = time.monotonic()
    done = subprocess.run([*JAXGRADE, "check", str(submission), "-e", "named_sharding_replicated"],
                          capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    return done, time.monotonic() - started


def breakdown(stderr: str) -> list[tuple[int, float | None, str]]:
    """(indent, seconds or None for "?", label) of each line after the header; the header once."""
    lines = stderr.splitlines()
    assert lines.count(HEADER) == 1, stderr
    parsed = []
    for line in lines[lines.index(HEADER) + 1:]:
        found = LINE.match(line)
        assert found, f"not a timing line: {line!r}"
        value, indent, label = found.groups()
        parsed.append((len(indent) // 2, None if value == "?" else float(value), label))
    return parsed


def labelled(parsed: list[tuple[int, float | None, str]], start: str) -> float | None:
    [value] = [v for _, v, label in parsed if label.startswith(start)]
    return value


def test_check_prints_each_phase_with_a_number_adding_up_to_at_most_the_wall_time():
    done, outside = check(SEED_EXERCISE / "reference.py", timings=True)
    assert done.returncode == 0, done.stderr
    parsed = breakdown(done.stderr)
    for phase in PHASES:
        value = labelled(parsed, phase)
        assert value is not None and value >= 0, (phase, done.stderr)
    for name in CHECKS:
        assert labelled(parsed, f"check {name}") is not None, (name, done.stderr)
    # the reference's checks call it: their time in the child is a number, within their requests
    calls = [v for _, v, label in parsed if label == "in the child: the function's calls"]
    requests = [v for _, v, label in parsed if label.startswith("requests to the child")]
    assert all(c is not None and r is not None and c <= r + 1e-3 for c, r in zip(calls, requests)), done.stderr
    assert sum(c for c in calls if c is not None) > 0
    wall = labelled(parsed, "wall:")
    summed = sum(v for indent, v, _ in parsed if indent == 1 and v is not None)
    assert wall is not None and abs(summed - wall) <= 0.01 + 0.001 * len(parsed), done.stderr  # "other" is the rest
    # the breakdown's own wall is this process's life until it printed: within what we saw from outside
    rounding = 0.0005 * len(parsed)
    assert summed - labelled(parsed, "other") <= wall + rounding, done.stderr
    assert wall <= outside + 0.02, (wall, outside)  # /proc says when the process started in 10 ms ticks
    child = sum(labelled(parsed, p) or 0 for p in PHASES[4:9])
    assert child <= labelled(parsed, "child start: spawned") + 0.01, done.stderr


def test_without_the_switch_nothing_more_is_printed_and_the_report_is_the_same():
    without, _ = check(SEED_EXERCISE / "reference.py", timings=False)
    with_timings, _ = check(SEED_EXERCISE / "reference.py", timings=True)
    assert without.returncode == with_timings.returncode == 0
    assert without.stderr == "", without.stderr
    assert with_timings.stdout == without.stdout  # the report, byte for byte
    assert with_timings.stderr.startswith(HEADER), with_timings.stderr


FORGER = '''
import json, os, struct, sys
print("jaxgrade timings (seconds; JAXGRADE_TIMINGS=1, docs/performance.md):")
print("   0.001    check value.random_vectors", file=sys.stderr)
print("   9.999    forged phase")


def replicated_sharding_value(x):
    # figures the reply's schema allows (grader.wire.CallTiming; a field it does not name would
    # make the whole reply malformed), none of them one the parent measured
    body = json.dumps({"ok": True, "value": {"leaves": []}, "placements": [],
                       "timing": {"run_s": 1e9, "compile_s": float("nan")}}).encode()
    os.write(int(sys.argv[2]), struct.pack("!I", len(body)) + body)
    print("   0.000  forged phase")
    return x.sum()
'''


def test_what_the_submission_prints_or_writes_to_the_channel_cannot_change_the_breakdown(tmp_path):
    reference, _ = check(SEED_EXERCISE / "reference.py", timings=True)
    forger = tmp_path / "forger.py"
    forger.write_text(FORGER)
    done, outside = check(forger, timings=True)
    assert done.returncode in (0, 1), done.stderr  # graded (badly), never a crash of the grader
    parsed = breakdown(done.stderr)
    def shape(lines: list[tuple[int, float | None, str]]) -> list[tuple[int, str]]:  # calls made vary
        return [(indent, re.sub(r"\(\d+ calls\)", "(N calls)", label)) for indent, _, label in lines]

    assert shape(parsed) == shape(breakdown(reference.stderr))
    assert "forged" not in done.stderr
    wall = labelled(parsed, "wall:")
    assert wall is not None and all(v is None or 0 <= v <= wall for _, v, _ in parsed), done.stderr
    assert None in [v for _, v, label in parsed if label == "in the child: the function's calls"], done.stderr


def test_a_figure_from_the_child_is_kept_only_when_it_fits_what_the_parent_measured():
    for junk in (True, "0.1", None, float("nan"), float("inf"), -0.5, 2.5, [0.1], {"s": 0.1}):
        assert number(junk, 0.0, 2.0) is None, junk
    assert number(1, 0.0, 2.0) == 1.0 and number(0.25, 0.0, 2.0) == 0.25
    timings = Timings()
    # instants out of order or outside the spawn and the greeting are dropped; the rest kept
    timings.started(10.0, 12.0, {"first_line": 10.1, "imported": 9.0, "jax": 11.0, "set_up": 13.0,
                                 "backend": 11.5, "sent": "11.9"})
    assert timings.child == {"first_line": 10.1, "imported": None, "jax": 11.0, "set_up": None, "backend": 11.5,
                             "sent": None}
    timings.begin("value.x")
    timings.request("call", 0.5, {"run_s": 0.2, "compile_s": 0.1})
    timings.request("call", 0.5, {"run_s": 0.2, "compile_s": 0.3})  # compiling longer than the call ran
    assert (timings.checks["value.x"].run_s, timings.checks["value.x"].compile_s) == (0.4, None)
    timings.request("call", 0.5, {"run_s": 0.6})  # longer than its round trip
    timings.end("value.x")
    check_time = timings.checks["value.x"]
    assert check_time.run_s is None and check_time.calls == 3 and math.isclose(check_time.requests_s, 1.5)
    timings.request("load", 0.1, {"file_s": 0.05})
    timings.request("load", 0.1, "junk")  # a second load (a child restarted) keeps the first figures
    assert (timings.load_s, timings.file_s) == (0.1, 0.05)
    shown = timings.lines(20.0)
    assert all(seconds is None or seconds >= 0 for _, seconds, _ in shown)
