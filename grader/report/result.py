"""The result of grading one submission: plain data that every renderer reads."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Mapping, get_args

from grader.array_layout import ArrayLayout
from grader.outcome import CATEGORIES, Category, Status
from grader.release import VISIBILITIES, Visibility

SCHEMA = "jaxgrade.report/1"
# A whole report: "error" when the grader's environment failed and nothing could be judged.
ReportStatus = Literal["passed", "failed", "error"]
_TEXT, _NUMBER, _OPTIONAL_TEXT, _DICT = (str,), (int, float), (str, type(None)), (dict,)
_OPTIONAL_DICT = (dict, type(None))
# Each field's types in ``as_data`` after a JSON round trip (a tuple of checks arrives as a list).
_CHECK_TYPES = {"id": _TEXT, "title": _TEXT, "category": _TEXT, "status": _TEXT, "score": _NUMBER,
                "max_score": _NUMBER, "message": _TEXT, "hint": _OPTIONAL_TEXT, "counterexample": _OPTIONAL_TEXT,
                "expected": _OPTIONAL_TEXT, "observed": _OPTIONAL_TEXT, "reproduce": _OPTIONAL_TEXT,
                "advisory": _OPTIONAL_TEXT, "visibility": _TEXT, "duration_s": _NUMBER,
                "expected_layout": _OPTIONAL_DICT, "observed_layout": _OPTIONAL_DICT}
_REPORT_TYPES = {"exercise": _TEXT, "title": _TEXT, "status": _TEXT, "checks": (list, tuple), "submission": _DICT,
                 "environment": _DICT, "duration_s": _NUMBER, "command": _TEXT, "output": _DICT,
                 "score": _NUMBER, "max_score": _NUMBER}


def _typed(data: object, types: dict[str, tuple[type, ...]], what: str) -> Mapping[str, Any]:
    """``data`` when it is a mapping with exactly the keys of ``types``, each value of its types
    (a bool is no number here); else ValueError."""
    if not isinstance(data, Mapping) or set(data) != set(types):
        raise ValueError(f"{what}: not the fields of one")
    for name, allowed in types.items():
        value = data[name]
        if not isinstance(value, allowed) or (isinstance(value, bool) and allowed == _NUMBER):
            raise ValueError(f"{what}: {name} is a {type(value).__name__}")
    return data


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
    # The two layouts a failed placement or layout check compared (grader.array_layout), to draw.
    expected_layout: ArrayLayout | None = None
    observed_layout: ArrayLayout | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "category": self.category, "status": self.status,
                "score": self.score, "max_score": self.max_score, "message": self.message,
                "hint": self.hint, "counterexample": self.counterexample, "expected": self.expected,
                "observed": self.observed, "advisory": self.advisory,
                "expected_layout": self.expected_layout.to_dict() if self.expected_layout else None,
                "observed_layout": self.observed_layout.to_dict() if self.observed_layout else None}

    @classmethod
    def from_data(cls, data: object) -> CheckResult:
        """The check whose ``dataclasses.asdict`` is ``data`` (see ``Report.from_data``)."""
        found = _typed(data, _CHECK_TYPES, "a check's result")
        if found["category"] not in CATEGORIES or found["status"] not in get_args(Status) \
                or found["visibility"] not in VISIBILITIES:
            raise ValueError(f"a check's result: category {found['category']!r}, status {found['status']!r}, "
                             f"visibility {found['visibility']!r}")
        layouts = {k: None if found[k] is None else ArrayLayout.from_data(found[k])
                   for k in ("expected_layout", "observed_layout")}
        return cls(**{**found, **layouts})


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

    @classmethod
    def from_data(cls, data: object) -> Report:
        """The report whose ``as_data()`` is ``data``, also after a JSON round trip: how the warm
        service hands a notebook check's report back to the kernel (grader.notebook.warm_cells), which
        shows it as if it had graded the cells itself. Every field is checked (names, types, the
        scores adding up); anything else is a ValueError, and the kernel grades the cells itself."""
        found = dict(_typed(data, _REPORT_TYPES, "a report"))
        if found["status"] not in get_args(ReportStatus):
            raise ValueError(f"a report: status {found['status']!r}")
        score, max_score = found.pop("score"), found.pop("max_score")
        report = cls(**{**found, "checks": tuple(CheckResult.from_data(c) for c in found["checks"])})
        if (report.score, report.max_score) != (score, max_score):
            raise ValueError("a report: its scores are not its checks' sums")
        return report

    # How a notebook (Jupyter, VS Code, Colab) or IPython shows the report: the student's report,
    # failed checks first (grader.notebook.display), as HTML, Markdown or text.
    def _repr_html_(self) -> str:
        return self._shown("html")

    def _repr_markdown_(self) -> str:
        return self._shown("md")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self._shown("text").rstrip("\n"))

    def __str__(self) -> str:
        return self._shown("text")

    def _shown(self, format: str) -> str:
        from grader.notebook.display import shown
        return shown(self, format)
