"""What GitHub Classroom's autograding reporter reads from a grading step (``--format classroom``).

The reporter (classroom-resources/autograding-grading-reporter, src/main.js) takes, for each
step id in its ``runners`` input, the environment variable ``<ID>_RESULTS``: base64 of a JSON
object ``{"version": 1, "status": "pass|fail|error", "max_score", "tests": [{"name", "status",
"score", "message", "test_code", "filename", "line_no", "execution_time"}]}``, which a runner
step sets as its ``result`` output. The points Classroom records are what src/notify-classroom.js
adds up: the sum of every test's ``score`` over the sum of ``max_score``. So each check's tests
carry its own points (one test per point: :func:`_tests` says why), and a submission with 14 of
19 points gets 14, from one grading: the command grader gives all or nothing per command, each
command a grading of its own.

Hidden checks count, as on Gradescope and PrairieLearn: the checks the audience may not see are
tests carrying their points, named by how many there are, without their names or messages.
A grader fault (a check that could not be judged) gives no result at all, so the reporter fails
the run and Classroom records no points nobody earned; the log says why.
"""
from __future__ import annotations

import base64
import json
from typing import Any

from grader.report.shape import Graded
from grader.runner_files import output_line
from grader.report.visibility import view

# The reporter passes each test's message to the log; a job's environment variable holds at most
# 128 KiB (Linux's MAX_ARG_STRLEN), so each message is kept short.
MESSAGE_CHARS = 600


def _message(check: dict[str, Any]) -> str:
    text = check["message"] + (f" Hint: {check['hint']}" if check["hint"] else "")
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS - 1] + "…"


def _tests(name: str, score: float, max_score: float, passed: bool, message: str, test_code: str,
           path: str) -> list[dict[str, Any]]:
    """The reporter's tests for one check (or the withheld ones together): one per point when the
    points are whole, so that the reporter's own log line (src/console-results.js: tests passed
    over tests, times max_score) says the points Classroom records (the sum of the scores);
    else one test with the check's score, passed when the check (``passed``) did. The first test
    carries the message, the first that failed the command that reproduces it."""
    whole = float(max_score).is_integer() and float(score).is_integer() and max_score >= 1
    count = int(max_score) if whole else 1
    tests = []
    for unit in range(count):
        earned = unit < score if whole else passed
        first_failed = not earned and (not whole or unit == int(score))
        tests.append({"name": name if count == 1 else f"{name} (point {unit + 1} of {count})",
                      "status": "pass" if earned else "fail", "score": (1.0 if earned else 0.0) if whole else score,
                      "message": message if unit == 0 else "",
                      "test_code": test_code if first_failed else "", "filename": path, "line_no": 0,
                      "execution_time": 0})
    return tests


def classroom_result(report: Graded, *, audience: str = "student", stage: str = "open") -> dict[str, Any] | None:
    """The reporter's JSON for ``report`` laid out from the ``audience``'s view, or None for a
    grader fault (no result: Classroom then records nothing)."""
    if report.status == "error" or any(c.status == "error" for c in report.checks):
        return None
    shown = view(report, audience, stage)
    path = shown["submission"].get("path") or ""
    tests = [test for c in shown["checks"]
             for test in _tests(f"{c['id']}: {c['title']}", c["score"], c["max_score"], c["status"] == "passed",
                                _message(c), c["reproduce"] or "", path)]
    withheld = shown["withheld"]["count"]
    if withheld:
        seen = {c["id"] for c in shown["checks"]}
        hidden = [c for c in report.checks if c.id not in seen]
        plural = "s" if withheld != 1 else ""
        tests += _tests(f"{withheld} hidden check{plural}", round(sum(c.score for c in hidden), 6),
                        round(sum(c.max_score for c in hidden), 6), all(c.status == "passed" for c in hidden),
                        f"{withheld} hidden check{plural}: graded, not shown.", "", path)
    return {"version": 1, "status": "pass" if report.status == "passed" else "fail",
            "max_score": report.max_score, "tests": tests}


def step_output(result: dict[str, Any]) -> str:
    """What a step appends to ``$GITHUB_OUTPUT`` for its ``result``: base64 of the compact JSON,
    between ``result<<DELIMITER`` and a delimiter drawn now (grader.runner_files.output_line): a
    line a submission wrote there earlier cannot name it, so cannot end a block of its own with
    jaxgrade's line and put its own value in its place."""
    encoded = base64.b64encode(json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode()).decode()
    return output_line("result", encoded)
