"""When an exercise's delayed checks become visible: its ``[release]`` table and the
visibilities a check can have. Declared by exercises (``grader.authoring.exercise``), applied by
``grader.report.visibility``."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Literal, get_args

Visibility = Literal["visible", "after_due_date", "after_published", "hidden"]
Stage = Literal["open", "due", "published"]

VISIBILITIES: tuple[str, ...] = get_args(Visibility)
STAGES: tuple[str, ...] = get_args(Stage)


@dataclass(frozen=True)
class Release:
    """An exercise's ``[release]`` table: ``due`` (a TOML date-time with a UTC offset) and
    ``published`` (true once the instructor has released the grades)."""
    due: dt.datetime | None = None
    published: bool = False

    def stage(self, now: dt.datetime | None = None) -> Stage:
        if self.published:
            return "published"
        if self.due is not None and (now or dt.datetime.now(dt.timezone.utc)) >= self.due:
            return "due"
        return "open"


def parse_release(table: dict[str, Any], where: str) -> Release:
    """Read a ``[release]`` table; ``where`` names the file in error messages."""
    unknown = set(table) - {"due", "published"}
    if unknown:
        raise ValueError(f"{where}: [release] knows 'due' and 'published', not {sorted(unknown)}")
    due = table.get("due")
    if due is not None and (not isinstance(due, dt.datetime) or due.tzinfo is None):
        raise ValueError(f"{where}: [release] due must be a date-time with a UTC offset, "
                         f"e.g. due = 2026-12-01T23:59:00Z")
    published = table.get("published", False)
    if not isinstance(published, bool):
        raise ValueError(f"{where}: [release] published must be true or false")
    return Release(due=due, published=published)
