"""An escape hatch: the exercise's own predicate over what the probe call was observed to do.

When no check of the library says what a task asks, ``Predicate`` lets the instructor say it
as a function of the observations the other structure checks read. The function runs in the
grader's process, on data (never on the student's code, never in the child):

    def body_is_checkpointed(seen: Observed) -> bool:
        return any("checkpoint" in node.within for node in seen.program.uses("scan"))

    Predicate(body_is_checkpointed, "the scan's body is inside jax.checkpoint",
              id="structure.checkpointed", hint="Wrap the step in jax.checkpoint before scanning it.")

It returns True or False, or an :class:`Outcome` of its own (to say what it saw: its
``observed`` is the report's observed line). A submission whose probe call could not be
observed (it raised, it timed out, a cross-check of the evidence failed) fails before the
function is called, as every structure check does; an exception raised by the function is the
exercise's error, never the student's failure.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import numpy as np

from grader.checks.base import Check, Context
from grader.checks.evidence import Placement, evidence
from grader.checks.program_checks import observed_program
from grader.checks.returns import probe_call
from grader.observe.program import Program
from grader.observe.returned import Returned
from grader.outcome import Category, Outcome


@dataclass(frozen=True)
class Observed:
    """What a predicate is given: the probe call as data.

    ``returned``: the call's reply (``leaves`` with their shardings and shards, ``jit_calls``,
    ``compilations``, ``programs`` (what XLA compiled: collectives, memory), ``host`` work);
    ``program``: the program it ran (``nodes`` with their primitive, params and the
    transformations they are ``within``; ``uses``, ``derived_from``, ``feeds``,
    ``all_placements``); ``traced``: what ``jax.make_jaxpr`` traced on the probe (None when
    it could not); ``placements``: every value given a sharding, related to the argument
    and result leaves (``grader.checks.evidence.Placement``); ``probe``: the probe arguments;
    ``calls``: the other calls made so far (the value checks'), as (arguments, reply);
    ``devices``: the devices' names."""
    returned: Returned
    program: Program
    traced: Program | None
    placements: tuple[Placement, ...]
    probe: dict[str, Any]
    calls: tuple[tuple[dict[str, Any], Returned], ...] = ()
    devices: tuple[str, ...] = field(default=())


def observe(context: Context) -> Observed | str:
    """The probe call as the structure checks read it (what a ``Predicate`` and ``jaxgrade
    explain`` show), or why it cannot be observed."""
    program, why = observed_program(context)
    if program is None:
        return str(why)
    found = evidence(context)
    traced = context.session.cache.get("trace")
    return Observed(probe_call(context), program, getattr(traced, "program", None), found.placements,
                    context.probe, tuple(context.session.calls), tuple(found.device_names))


@dataclass(frozen=True)
class Predicate(Check):
    """Passes when ``predicate(observed)`` is true (or is a passing Outcome) on the probe call;
    ``description`` says, as a clause, what it asks ("the scan's body is inside
    jax.checkpoint"), and is the title unless one is given."""
    predicate: Callable[[Observed], "bool | Outcome"]
    description: str
    id: str = field(kw_only=True)
    title: str = field(default="", kw_only=True)
    category: ClassVar[Category] = "structure"

    def __post_init__(self) -> None:
        if not callable(self.predicate):
            raise TypeError(f"Predicate: its first argument must be a function of the observations, not "
                            f"{type(self.predicate).__name__}")
        if not self.title:
            object.__setattr__(self, "title", self.description[:1].upper() + self.description[1:])

    def judge(self, context: Context) -> Outcome:
        seen = observe(context)
        if isinstance(seen, str):
            return Outcome.failed(f"Nothing to judge here: {seen}.", expected=self.description, observed=seen,
                                  hint_applies=False)
        try:
            verdict = self.predicate(seen)
        except Exception as error:  # the exercise's code failed: never the student's fault
            return Outcome("error", f"The exercise's check raised {type(error).__name__}: {error} (in "
                                    f"{_where(self.predicate)}). This is an error in the exercise, not in your "
                                    "submission: report it to your instructor.")
        if isinstance(verdict, Outcome):
            return verdict
        if isinstance(verdict, (bool, np.bool_)):
            if verdict:
                return Outcome.passed(f"True of your function: {self.description}.")
            return Outcome.failed(f"Not true of your function: {self.description}.", expected=self.description,
                                  observed=f"not so in the probe call, by the exercise's test "
                                           f"{getattr(self.predicate, '__name__', 'predicate')}")
        return Outcome("error", f"The exercise's check returned {type(verdict).__name__}, not True, False or an "
                                f"Outcome (in {_where(self.predicate)}). This is an error in the exercise, not in "
                                "your submission: report it to your instructor.")


def _where(function: Callable[..., Any]) -> str:
    """``body_is_checkpointed at checks.py:12``, or the function's name where it has no code."""
    code = getattr(function, "__code__", None)
    name = getattr(function, "__qualname__", None) or type(function).__name__
    if code is None:
        return name
    return f"{name} at {code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"
