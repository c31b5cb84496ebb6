"""``limits``: the submission stayed within its time and memory, and its process lived."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from grader.checks.base import Check, Context
from grader.outcome import Category, Outcome

WHAT = {"time": "Your submission ran past its time limit", "memory": "Your submission ran past its memory limit",
        "crash": "Your submission's process died", "protocol": "Your submission's process broke the grading channel",
        "disk": "Your submission ran past its disk space"}
WHAT_TO_DO = {"time": "Make each call return quickly: no unbounded loops, no sleeping, no reading input.",
              "memory": "Build only the arrays the task needs.",
              "crash": "Return the result instead of ending the process (sys.exit, os._exit, signals), "
                       "and avoid unbounded recursion.",
              "protocol": "Leave the process's inherited file descriptors alone.",
              "disk": "Write only the files the task needs, and delete those you no longer need."}


@dataclass(frozen=True, kw_only=True)
class WithinLimits(Check):
    """Judged last, from every incident the session recorded while the other checks ran."""
    id: str = "limits.resources"
    title: str = "Runs within the time and memory limits"
    category: ClassVar[Category] = "limits"

    def judge(self, context: Context) -> Outcome:
        incidents = context.session.incidents
        limits = context.session.limits
        if not incidents:
            return Outcome.passed(f"Stayed within {limits.call_s:g} s per call and {limits.memory_mib} MiB.")
        first = incidents[0]  # later ones are often consequences of it
        more = f" ({len(incidents) - 1} more incident(s) after it.)" if len(incidents) > 1 else ""
        # this check is shown to students even when the one whose input caused the incident is not
        observed = first.message if not first.withheld else "in a check not shown to you yet"
        return Outcome.failed(f"{WHAT.get(first.kind, first.kind)}: {observed}.{more} "
                              f"{WHAT_TO_DO.get(first.kind, '')}".rstrip(),
                              expected=f"each call within {limits.call_s:g} s and {limits.memory_mib} MiB",
                              observed=observed)
