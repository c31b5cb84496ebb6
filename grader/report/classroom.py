"""What GitHub Classroom's autograding reporter reads from a grading step (``--format classroom``).

The reporter (classroom-resources/autograding-grading-reporter, src/main.js) takes, for each
step id in its ``runners`` input, the environment variable ``<ID>_RESULTS``: base64 of a JSON
object ``{"version": 1, "status": "pass|fail|error", "max_score", "tests": [{"name", "status",
"score", "message", "test_code", "filename", "line_no", "execution_time"}]}``, which a runner
step sets as its ``result`` output. The points Classroom records are what src/notify-classroom.js
adds up: the sum of every test's ``score`` over the sum of ``max_score``. So each check is a test
carrying its own points, and a submission with 14 of 19 points gets 14, from one grading: the
command grader gives all or nothing per command, each command a grading of its own.

Hidden checks count, as on Gradescope and PrairieLearn: the checks the audience may not see are
one test carrying their points, named by how many there are, without their names or messages.
A grader fault (a check that could not be judged) gives no result at all, so the reporter fails
the run and Classroom records no points nobody earned; the log says why.
"""
from __future__ import annotations

import base64
import json
from typing import Any

from grader.report.shape import Graded
from grader.report.visibility import view

# The reporter passes each test's message to the log; a job's environment variable holds at most
# 128 KiB (Linux's MAX_ARG_STRLEN), so each message is kept short.
MESSAGE_CHARS = 600
STATUS = {"passed": "pass", "failed": "fail", "skipped": "fail", "error": "error"}


def _message(check: dict[str, Any]) -> str:
    text = check["message"] + (f" Hint: {check['hint']}" if check["hint"] else "")
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS - 1] + "…"


def classroom_result(report: Graded, *, audience: str = "student", stage: str = "open") -> dict[str, Any] | None:
    """The reporter's JSON for ``report`` laid out from the ``audience``'s view, or None for a
    grader fault (no result: Classroom then records nothing)."""
    if report.status == "error" or any(c.status == "error" for c in report.checks):
        return None
    shown = view(report, audience, stage)
    path = shown["submission"].get("path") or ""
    tests = [{"name": f"{c['id']}: {c['title']}", "status": STATUS[c["status"]], "score": c["score"],
              "message": _message(c), "test_code": (c["reproduce"] or "") if c["status"] != "passed" else "",
              "filename": path, "line_no": 0, "execution_time": round(c["duration_s"], 3)}
             for c in shown["checks"]]
    withheld = shown["withheld"]["count"]
    if withheld:
        hidden = [c for c in report.checks if c.id not in {s["id"] for s in shown["checks"]}]
        earned = round(sum(c.score for c in hidden), 6)
        plural = "s" if withheld != 1 else ""
        tests.append({"name": f"{withheld} hidden check{plural}",
                      "status": "pass" if all(c.status == "passed" for c in hidden) else "fail",
                      "score": earned, "message": f"{withheld} hidden check{plural}: graded, not shown.",
                      "test_code": "", "filename": path, "line_no": 0, "execution_time": 0})
    return {"version": 1, "status": "pass" if report.status == "passed" else "fail",
            "max_score": report.max_score, "tests": tests}


def step_output(result: dict[str, Any]) -> str:
    """The ``result=...`` line a step appends to ``$GITHUB_OUTPUT``: base64 of the compact JSON,
    one line (as the official runners write it)."""
    encoded = base64.b64encode(json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode()).decode()
    return f"result={encoded}\n"
