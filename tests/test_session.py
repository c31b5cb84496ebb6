"""grader.observe.session: what enters the grader from a child is made safe, bounded and
checked once, so one submission's strings or forged replies cannot break its report, the
renderers, or the rest of a class. Real children, real hostile files (tests/hostile/)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader import find_exercise, grade
from grader.report.render import FORMATS, render

HOSTILE = Path(__file__).resolve().parent / "hostile"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def exercise():
    return find_exercise("named_sharding_replicated")


@pytest.mark.slow
def test_a_lone_surrogate_reaches_no_output_raw(exercise) -> None:
    report = grade(exercise, HOSTILE / "lone_surrogate_error.py")
    assert report.status == "failed"
    for format in FORMATS:
        rendered = render(report, format) if format != "github" else render(report, "md")
        rendered.encode("utf-8")  # would raise on a lone surrogate
    assert "bad \ufffd byte" in report.checks[1].message or "bad ? byte" in report.checks[1].message


@pytest.mark.slow
def test_an_8_mib_message_leaves_a_small_report(exercise) -> None:
    report = grade(exercise, HOSTILE / "huge_error_message.py")
    assert report.status == "failed"
    for format in ("json", "md", "html", "text", "junit", "gradescope"):
        assert len(render(report, format).encode()) < 200_000, format
    assert "more characters]" in report.checks[1].message


@pytest.mark.slow
def test_a_forged_reply_of_the_wrong_shape_is_the_submissions_failure(exercise, tmp_path) -> None:
    report = grade(exercise, HOSTILE / "wrong_shape_reply.py")
    assert report.status == "failed" and not any(c.status == "error" for c in report.checks)
    limits = next(c for c in report.checks if c.category == "limits")
    assert "broke the grading channel" in limits.message and "malformed" in limits.message
    shown = subprocess.run([sys.executable, "-m", "grader", "check", str(HOSTILE / "wrong_shape_reply.py"), "-e",
                            exercise.slug, "--format", "json"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert shown.returncode == 1, shown.stderr
    assert json.loads(shown.stdout)["status"] == "failed"
