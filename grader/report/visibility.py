"""Who may see which check, and when.

Every check has a visibility (from the exercise's ``[visibility]`` table, default ``visible``):

    visible          shown to students in every report
    after_due_date   shown once the exercise's due date has passed
    after_published  shown once the instructor has published the grades
    hidden           never shown to students; it still counts in the instructor's score

A report is rendered for an *audience*: ``student`` (``jaxgrade check``, GitHub, the student
side of Gradescope) or ``instructor`` (batch reports, gradebooks). For students the release
*stage* of the exercise (``open`` → ``due`` → ``published``) decides which of the delayed
checks are shown yet. :func:`view` is the one place that decides what a student may see:
templates receive its result, never the full report, so an instructor's own template cannot
leak a hidden check by accident. It is also where every string of the report becomes safe to
show (:func:`grader.report.safe_text.for_display`): each format lays out escaped text only.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, get_args

from grader.release import STAGES
from grader.report.safe_text import for_display
from grader.report.shape import Graded

if TYPE_CHECKING:
    from grader.checks.base import Check
    from grader.authoring.exercise import Exercise

Audience = Literal["student", "instructor"]

AUDIENCES: tuple[str, ...] = get_args(Audience)

NO_OUTPUT: dict[str, Any] = {"head": "", "tail": "", "total_bytes": 0, "dropped_bytes": 0}

# The first stage at which a student sees a check of each visibility (None: never).
_SHOWN_FROM: dict[str, str | None] = {"visible": "open", "after_due_date": "due",
                                      "after_published": "published", "hidden": None}


def shown_to(visibility: str, audience: str, stage: str = "open") -> bool:
    """Whether a check of this visibility appears, with its details, in a report for this audience."""
    if audience not in AUDIENCES:
        raise ValueError(f"unknown audience {audience!r}; choose one of {', '.join(AUDIENCES)}")
    if stage not in STAGES:
        raise ValueError(f"unknown release stage {stage!r}; choose one of {', '.join(STAGES)}")
    if audience == "instructor":
        return True
    first = _SHOWN_FROM[visibility]
    return first is not None and STAGES.index(stage) >= STAGES.index(first)


def shown_checks(exercise: Exercise, audience: str = "student", stage: str | None = None) -> list[Check]:
    """The exercise's checks a report for ``audience`` shows, before any grading (at the
    exercise's own release stage unless ``stage`` is given): what a runner lists as its tests."""
    stage = stage or exercise.release.stage()
    return [c for c in exercise.checks if shown_to(exercise.visibility_of(c.id), audience, stage)]


def view(report: Graded, audience: str = "student", stage: str = "open") -> dict[str, Any]:
    """What a renderer may lay out for ``audience``: the report's data with the checks that
    audience may not see yet removed and summarised as ``withheld`` (a count and their points).

    For students the score, status and verdict are computed over the shown checks only: a
    student never learns from a report whether a withheld check passed. ``status`` is
    ``pending`` when every shown check passed but some are withheld, so no report says
    "all checks passed" while a hidden check may fail. The captured output of the student's
    program is dropped too when checks are withheld, because hidden inputs could be printed.
    Every string comes escaped (:func:`~grader.report.safe_text.for_display`): file names,
    messages and output hold what the student chose, control and bidi characters included."""
    data = report.as_data()
    data["output"] = {**NO_OUTPUT, **data["output"]}
    checks = [c for c in data["checks"] if shown_to(c["visibility"], audience, stage)]
    withheld = [c for c in data["checks"] if not shown_to(c["visibility"], audience, stage)]
    data["audience"], data["stage"] = audience, stage
    data["checks"] = checks
    data["withheld"] = {"count": len(withheld), "max_score": round(sum(c["max_score"] for c in withheld), 6)}
    if audience == "student" and withheld:
        data["score"] = round(sum(c["score"] for c in checks), 6)
        data["max_score"] = round(sum(c["max_score"] for c in checks), 6)
        data["output_withheld"] = bool(data["output"].get("total_bytes"))
        data["output"] = dict(NO_OUTPUT)
        if any(c["status"] in ("failed", "error") for c in checks):
            data["status"] = "failed"
        elif checks and not any(c["status"] in ("passed", "failed") for c in checks):
            data["status"] = "error"
        else:
            data["status"] = "pending"
    else:
        data["output_withheld"] = False
    data["verdict"] = verdict(data["status"], len(withheld))
    return for_display(data)


def verdict(status: str, withheld: int) -> str:
    """The one-line conclusion every student-facing format uses."""
    pending = f"{withheld} hidden check{'s' if withheld != 1 else ''} pending"
    if status == "pending":
        return f"all visible checks passed · {pending}"
    words = {"passed": "all checks passed", "failed": "some checks failed", "error": "could not be graded"}[status]
    if withheld and status == "failed":
        words = "some visible checks failed"
    return f"{words} · {pending}" if withheld else words
