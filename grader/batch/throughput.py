"""How fast a class run graded, as its summary states it (issue #57): submissions a minute, CPU
seconds a submission, the workers, and the grader's own process's part of the CPU.

A run's grading is timed from the backend's start (the preparation included: it is part of what
the instructor waits for) to its close. CPU is that of this machine's processes: the grader's
own (``RUSAGE_SELF``) and every process it reaped meanwhile (``RUSAGE_CHILDREN``: the grading
processes, the zygote and through it every child), so it is known only when grading ran here;
on a cluster the workers' CPU is theirs, and the summary leaves it out. The grader's own share
is what cannot run in parallel (Amdahl's law: a share s caps N workers at 1 / (s + (1 - s) / N)).
"""
from __future__ import annotations

import resource
import time
from dataclasses import dataclass
from typing import Any


def _cpu() -> tuple[float, float]:
    """CPU seconds so far: this process's own, and its reaped descendants'."""
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, reaped.ru_utime + reaped.ru_stime


@dataclass(frozen=True)
class Throughput:
    """``graded``: submissions graded (reused results took none); ``seconds``: the grading's wall
    time; ``workers``: submissions graded at once; ``cpu_s`` and ``own_cpu_s``: the CPU of this
    machine's processes and the grader's own part of it (None: graded elsewhere)."""
    graded: int
    seconds: float
    workers: int
    cpu_s: float | None = None
    own_cpu_s: float | None = None

    def as_data(self) -> dict[str, Any]:
        """Plain data for the summary (its ``throughput``)."""
        measured = self.graded > 0 and self.seconds > 0
        return {"graded": self.graded, "seconds": round(self.seconds, 2), "workers": self.workers,
                "per_minute": round(60 * self.graded / self.seconds, 1) if measured else None,
                "cpu_s_per_submission": round(self.cpu_s / self.graded, 3)
                if measured and self.cpu_s is not None else None,
                "own_share": round(self.own_cpu_s / self.cpu_s, 3)
                if self.cpu_s and self.own_cpu_s is not None else None}


class Stopwatch:
    """Started when grading starts; :meth:`stop` says how fast it went (after the backend
    closed, so that every process it started has been reaped and counted)."""

    def __init__(self) -> None:
        self._started = time.monotonic()
        self._own, self._reaped = _cpu()

    def stop(self, graded: int, workers: int, local: bool) -> Throughput:
        seconds = time.monotonic() - self._started
        if not local:
            return Throughput(graded, seconds, workers)
        own, reaped = _cpu()
        own -= self._own
        return Throughput(graded, seconds, workers, own + reaped - self._reaped, own)


def describe(throughput: dict[str, Any] | None) -> str:
    """The summary's throughput line, from :meth:`Throughput.as_data` (empty when this run graded nothing)."""
    if not throughput or not throughput["per_minute"]:
        return ""
    graded, workers = throughput["graded"], throughput["workers"]
    line = (f"{graded} submission{'' if graded == 1 else 's'} graded in {throughput['seconds']:.1f} s by "
            f"{workers} worker{'' if workers == 1 else 's'}: {throughput['per_minute']:.0f} a minute")
    if throughput["cpu_s_per_submission"] is not None:
        line += f", {throughput['cpu_s_per_submission']:.2f} s of CPU each"
        if throughput["own_share"] is not None:
            line += f" ({100 * throughput['own_share']:.0f}% of it in the grader's own process)"
    return line + "."
