"""The class run's progress on the terminal: counts, rate and ETA."""
from __future__ import annotations

import sys
import time
from typing import Mapping, TextIO

from grader.report.safe_text import for_terminal


class Progress:
    """Counts, rate and ETA: one redrawn line on a terminal, one plain line per result otherwise."""

    def __init__(self, total: int, stream: TextIO | None = None, interactive: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self.total, self.done, self.started = total, 0, time.monotonic()
        self.counts = {"passed": 0, "failed": 0, "error": 0}
        # The ETA's units of work: one per submission, unless ``expect`` says what each costs.
        self.costs: dict[str, float] = {}
        self.work, self.worked = float(total), 0.0

    def expect(self, seconds: Mapping[str, float]) -> None:
        """What each submission to come is expected to take (the last run's seconds), by the
        name ``update`` will be given: the ETA then counts a slow one as more of the run than a
        fast one. A run that starts with its slowest (grader.batch.run) would otherwise be told
        an ETA several times too long while they finish."""
        self.costs = dict(seconds)
        self.work = sum(self.costs.values())

    def _eta(self) -> str:
        elapsed = time.monotonic() - self.started
        if self.worked <= 0:
            return "--:--"
        left = int(elapsed / self.worked * max(self.work - self.worked, 0.0))
        return f"{left // 60}:{left % 60:02d}"

    def update(self, student: str, status: str, score: str) -> None:
        """One more result. ``student`` comes from a file or folder name: escaped here, so an
        escape sequence or a newline in it cannot redraw or split the line."""
        self.done += 1
        self.worked += self.costs.get(student, 1.0)
        self.counts[status] = self.counts.get(status, 0) + 1
        rate = self.done / max(time.monotonic() - self.started, 1e-9)
        if self.interactive:
            width = 24
            filled = int(width * self.done / max(self.total, 1))
            bar = "#" * filled + "." * (width - filled)
            self.stream.write(f"\r[{bar}] {self.done}/{self.total} · {self.counts['passed']} full marks · "
                              f"{self.counts['failed']} not · {self.counts['error']} errors · {rate:.1f}/s · "
                              f"ETA {self._eta()}\033[K")  # erase what a longer line left
        else:
            self.stream.write(f"[{self.done}/{self.total}] {for_terminal(student)}: {score} {status} "
                              f"(ETA {self._eta()})\n")
        self.stream.flush()

    def close(self) -> None:
        if self.interactive and self.done:
            self.stream.write("\n")
            self.stream.flush()
