"""``JAXGRADE_TIMINGS=1``: where one ``jaxgrade check``'s wall time goes, printed to stderr after
the report (docs/performance.md). Never part of a report, never a grade.

Instants are ``time.monotonic()`` (CLOCK_MONOTONIC, one clock for every process of a Linux
machine: the sandbox makes no time namespace), so the child's instants are placed on the
parent's line; the process's own start is read from ``/proc/self/stat`` (10 ms ticks). What
the child reports is the submission's process talking (it can write to its channel): each
figure is kept only when it is a number that fits what the parent measured around it (an
instant between the spawn and the greeting, a duration within its request's round trip), else
it shows as ``?``. Only numbers of the child's reach the output; every label is the grader's.
"""
from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

ENV = "JAXGRADE_TIMINGS"
# The child's instants, in the order they happen (grader.child.entry, Child.serve).
CHILD_INSTANTS = ("first_line", "imported", "jax", "set_up", "backend", "sent")


def wanted() -> bool:
    return os.environ.get(ENV) == "1"


def process_start() -> float | None:
    """When this process started, on the monotonic clock (None where /proc cannot say)."""
    try:
        with open("/proc/self/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # starttime: seconds after boot
        return time.monotonic() - (time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def number(value: Any, low: float, high: float) -> float | None:
    """``value`` when it is a finite number in [low, high], else None (shown as ``?``)."""
    if type(value) not in (int, float) or not math.isfinite(value) or not low <= value <= high:
        return None
    return float(value)


@dataclass
class CheckTime:
    started: float
    ended: float = 0.0
    requests_s: float = 0.0  # round trips of its requests, waiting for the child's start left out
    calls: int = 0
    run_s: float | None = 0.0  # in the child: the student's function running (None: a figure was junk)
    compile_s: float | None = 0.0  # of which XLA compiling or reading the compilation cache


@dataclass
class Timings:
    """One grading's instants and durations, filled by the CLI, the engine and the session."""
    marks: dict[str, float] = field(default_factory=dict)  # parent instants: see ``lines``
    child: dict[str, float | None] = field(default_factory=dict)  # the child's instants, checked
    devices: int = 0
    load_s: float | None = None  # the load request's round trip; in the child: ``file_s``
    file_s: float | None = None
    load_check: str | None = None  # the check that made it
    checks: dict[str, CheckTime] = field(default_factory=dict)
    current: str | None = None  # the check whose requests are being made

    def mark(self, name: str, at: float | None = None) -> None:
        self.marks.setdefault(name, time.monotonic() if at is None else at)

    def started(self, spawned: float, greeted: float, reported: Any) -> None:
        """The first child's start: spawned and its greeting read (the parent's instants), and
        the greeting's ``timing`` (the child's instants, each kept only after the one before
        it and within the spawn and the greeting)."""
        if "spawned" in self.marks:
            return
        self.mark("spawned", spawned)
        self.mark("greeted", greeted)
        after = spawned
        for name in CHILD_INSTANTS:
            value = reported.get(name) if isinstance(reported, dict) else None
            kept = number(value, after, greeted)
            self.child[name] = kept
            after = kept if kept is not None else after

    def request(self, op: str, seconds: float, reported: Any) -> None:
        """A request's round trip (after the child was ready) and the child's ``timing`` of it."""
        reported = reported if isinstance(reported, dict) else {}
        if op == "load" and self.load_s is None:
            self.load_s, self.file_s = seconds, number(reported.get("file_s"), 0.0, seconds)
            self.load_check = self.current
        check = self.checks.get(self.current) if self.current is not None else None
        if check is None:
            return
        check.requests_s += seconds
        if op != "call":
            return
        check.calls += 1
        run = number(reported.get("run_s"), 0.0, seconds)
        compiled = number(reported.get("compile_s"), 0.0, run) if run is not None else None
        check.run_s = None if run is None or check.run_s is None else check.run_s + run
        check.compile_s = None if compiled is None or check.compile_s is None else check.compile_s + compiled

    def begin(self, check: str) -> None:
        self.checks[check] = CheckTime(time.monotonic())
        self.current = check

    def end(self, check: str) -> None:
        self.checks[check].ended = time.monotonic()
        self.current = None

    def lines(self, end: float) -> list[tuple[int, float | None, str]]:
        """(indent, seconds or None, label). Indent 1: phases one after another (they add up to
        at most the wall time; ``other`` is the rest); indent 2: parts of, or beside, the one above."""
        m, c = self.marks, self.child

        def span(a: float | None, b: float | None) -> float | None:
            return None if a is None or b is None or b < a else b - a

        out: list[tuple[int, float | None, str]] = []
        top: list[float | None] = []

        def phase(seconds: float | None, label: str) -> None:
            out.append((1, seconds, label))
            top.append(seconds)

        phase(span(m.get("process"), m.get("grader")), "parent: Python's start (process start -> grader's first line)")
        phase(span(m.get("grader"), m.get("main")), "parent: imports (-> jaxgrade's main)")
        phase(span(m.get("main"), m.get("spawned")),
              "parent: finding the exercise, until the child is spawned (its imports: the sandbox's)")
        greeted = m.get("greeted")
        phase(span(m.get("spawned"), greeted), "child start: spawned -> its greeting read")
        out.append((2, span(m.get("spawned"), c.get("first_line")), "child: spawn -> its first line of code"))
        out.append((2, span(c.get("first_line"), c.get("imported")),
                    "child: imports the grader's child modules, NumPy"))
        out.append((2, span(c.get("imported"), c.get("jax")), "child: imports JAX"))
        out.append((2, span(c.get("jax"), c.get("set_up")), "child: patches, recorder, confinement"))
        out.append((2, span(c.get("set_up"), c.get("backend")),
                    f"child: backend start (jax.devices(), {self.devices} simulated CPU devices)"))
        out.append((2, span(c.get("backend"), greeted), "child: greeting sent and read"))
        out.append((2, span(m.get("spawned"), m.get("waiting")),
                    "parent meanwhile: the check's imports and set-up, the exercise's checks, until it waits for "
                    "the child (overlaps)"))
        loading = [(2, self.load_s, "loading the submission (the load request)"),
                   (2, self.file_s, "in the child: running the file")]
        if self.load_check not in self.checks:
            out.extend(loading)
        for name, check in self.checks.items():
            start = max(check.started, greeted) if greeted is not None else check.started
            seconds = span(start, check.ended)
            phase(seconds, f"check {name}")
            if name == self.load_check:
                out.extend(loading)
            out.append((2, check.requests_s, f"requests to the child ({check.calls} calls)"))
            out.append((2, check.run_s, "in the child: the function's calls"))
            out.append((2, check.compile_s, "in the child: compiling (or reading the compilation cache)"))
            out.append((2, None if seconds is None else max(seconds - check.requests_s, 0.0),
                        "judging in the parent (failed requests and restarts too, if any)"))
        phase(span(m.get("closing"), m.get("closed")), "closing the child")
        phase(span(m.get("rendering"), m.get("rendered")), "rendering the report")
        wall = span(m.get("process"), end)
        known = sum(s for s in top if s is not None)
        out.append((1, None if wall is None else max(wall - known, 0.0), "other (between the phases above)"))
        out.append((0, wall, "wall: process start -> this breakdown"))
        return out

    def print(self, stream: TextIO = sys.stderr) -> None:
        stream.write("jaxgrade timings (seconds; JAXGRADE_TIMINGS=1, docs/performance.md):\n")
        for indent, seconds, label in self.lines(time.monotonic()):
            shown = "?" if seconds is None else f"{seconds:.3f}"
            stream.write(f"{shown:>8}  {'  ' * indent}{label}\n")
        stream.flush()
