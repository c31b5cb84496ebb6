"""How a report shows itself in a notebook (``Report._repr_html_`` and its kin): the student's
report from the usual renderers, its failed checks first. Laying out only: the checks, scores
and what a student may see are the report's and ``visibility``'s, as in every other format."""
from __future__ import annotations

import dataclasses

from grader.errors import ExerciseError
from grader.authoring.exercise import find_exercise
from grader.report.render import html_fragment, render
from grader.report.shape import Graded

NOTEBOOK_FORMATS = ("html", "md", "text")


def _stage(slug: str) -> str:
    """The exercise's release stage, as ``jaxgrade check`` uses it; ``open`` (the least shown)
    when the exercise is not installed here."""
    try:
        return find_exercise(slug).release.stage()
    except ExerciseError:
        return "open"


def failed_first(report: Graded) -> Graded:
    """The same report with its failed checks, then its grader errors, ahead of the rest (each
    group in the exercise's order): what to fix comes first."""
    rank = {"failed": 0, "error": 1}
    return dataclasses.replace(report, checks=tuple(sorted(report.checks, key=lambda c: rank.get(c.status, 2))))


def shown(report: Graded, format: str) -> str:
    """``report`` for its student, laid out as ``html`` (a fragment), ``md`` or ``text``."""
    if format not in NOTEBOOK_FORMATS:
        raise ValueError(f"unknown notebook format {format!r}; choose one of {', '.join(NOTEBOOK_FORMATS)}")
    ordered, stage = failed_first(report), _stage(report.exercise)
    if format == "html":
        return html_fragment(ordered, stage=stage)
    return render(ordered, format, stage=stage)
