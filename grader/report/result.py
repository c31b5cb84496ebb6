"""The result of grading one submission: plain data that every renderer reads."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from grader.outcome import Category, Status
from grader.release import Visibility

SCHEMA = "jaxgrade.report/1"
# A whole report: "error" when the grader's environment failed and nothing could be judged.
ReportStatus = Literal["passed", "failed", "error"]


@dataclass(frozen=True)
class CheckResult:
    id: str
    title: str
    category: Category
    status: Status
    score: float
    max_score: float
    message: str
    hint: str | None = None
    counterexample: str | None = None
    expected: str | None = None
    observed: str | None = None
    reproduce: str | None = None
    advisory: str | None = None
    # Applied by grader/report/visibility.py; not in the jaxgrade.report/1 JSON, whose shape is fixed.
    visibility: Visibility = "visible"
    duration_s: float = 0.0  # time spent judging this check (JUnit's testcase time)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "category": self.category, "status": self.status,
                "score": self.score, "max_score": self.max_score, "message": self.message,
                "hint": self.hint, "counterexample": self.counterexample}


@dataclass(frozen=True)
class Report:
    exercise: str
    title: str
    status: ReportStatus
    checks: tuple[CheckResult, ...]
    submission: dict[str, Any]
    environment: dict[str, Any]
    duration_s: float
    command: str
    output: dict[str, Any] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return round(sum(c.score for c in self.checks), 6)

    @property
    def max_score(self) -> float:
        return round(sum(c.max_score for c in self.checks), 6)

    def to_dict(self) -> dict[str, Any]:
        """The ``jaxgrade.report/1`` JSON document."""
        return {"schema": SCHEMA, "exercise": self.exercise, "score": self.score, "max_score": self.max_score,
                "status": self.status, "checks": [c.to_dict() for c in self.checks],
                "submission": dict(self.submission), "environment": dict(self.environment),
                "duration_s": round(self.duration_s, 3)}

    def as_data(self) -> dict[str, Any]:
        """Everything, for templates: the JSON fields plus the details renderers lay out."""
        data = asdict(self)
        data.update(score=self.score, max_score=self.max_score)
        return data

    # How a notebook (Jupyter, VS Code, Colab) or IPython shows the report: the student's report,
    # failed checks first (grader.report.notebook), as HTML, Markdown or text.
    def _repr_html_(self) -> str:
        return self._shown("html")

    def _repr_markdown_(self) -> str:
        return self._shown("md")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self._shown("text").rstrip("\n"))

    def __str__(self) -> str:
        return self._shown("text")

    def _shown(self, format: str) -> str:
        from grader.report.notebook import shown
        return shown(self, format)
