"""What a renderer reads of a report (``grader.report.result.Report`` has it): named here so that
the renderers need not import the report, which imports them to show itself in a notebook."""
from __future__ import annotations

from typing import Any, Protocol


class Graded(Protocol):
    exercise: str
    title: str
    status: str
    checks: tuple[Any, ...]
    submission: dict[str, Any]
    environment: dict[str, Any]
    duration_s: float
    command: str
    output: dict[str, Any]

    @property
    def score(self) -> float: ...

    @property
    def max_score(self) -> float: ...

    def to_dict(self) -> dict[str, Any]: ...

    def as_data(self) -> dict[str, Any]: ...
