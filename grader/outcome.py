"""What a check concludes about one submission, before points are attached."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from grader.array_layout import ArrayLayout

Status = Literal["passed", "failed", "error", "skipped"]
Category = Literal["load", "type", "value", "structure", "limits"]
CATEGORIES: tuple[Category, ...] = ("load", "type", "value", "structure", "limits")


@dataclass(frozen=True)
class Outcome:
    """A check's verdict. ``fraction`` of the check's points is awarded (1.0 when passed).

    ``message`` is the one-paragraph summary; ``expected`` and ``observed`` the two sides of
    a failed comparison; ``counterexample`` the (shrunk) input that shows it; ``reproduce``
    a snippet that shows it outside the grader; ``advisory`` a note on a passing check;
    ``expected_layout`` and ``observed_layout`` the two layouts a failed placement or layout
    check compared, as data for the reports to draw beside the words."""
    status: Status
    message: str
    fraction: float = 0.0
    expected: str | None = None
    observed: str | None = None
    counterexample: str | None = None
    reproduce: str | None = None
    advisory: str | None = None
    # False when the check failed only because the function never answered (a crash, a
    # time-out): the check's hint, about what a right answer looks like, does not apply.
    hint_applies: bool = True
    expected_layout: ArrayLayout | None = None
    observed_layout: ArrayLayout | None = None

    @classmethod
    def passed(cls, message: str, advisory: str | None = None) -> "Outcome":
        return cls("passed", message, 1.0, advisory=advisory)

    @classmethod
    def failed(cls, message: str, **details: "str | bool | ArrayLayout | None") -> "Outcome":
        return cls("failed", message, 0.0, **details)

    @classmethod
    def skipped(cls, message: str) -> "Outcome":
        return cls("skipped", message, 0.0)
