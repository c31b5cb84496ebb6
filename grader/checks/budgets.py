"""``structure``: how much work the program the probe call ran does, counted in operations.

A loop written in Python runs its body once per step: traced or eager, the program holds one
copy of the body for each, so it grows with the input, compiles for longer and dispatches more.
``jax.lax.scan``, ``jax.vmap`` and whole-array operations keep one copy whatever the length.
``OperationCount`` counts the operations of the program a real call ran (``grader.observe``:
what a scan's or a jitted function's body holds is counted once, as it is compiled once), at
most ``at_most`` of them (or of one ``operation``), and, with ``grows_with``, calls the function
again on an input whose named leaves are twice as long along the named axis: the count must not
grow.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from grader.arguments import Signature, argument_leaves, with_leaf
from grader.checks.base import Check, Context
from grader.checks.program_checks import census, names_of, observed_program, spelled
from grader.observe.program import Program
from grader.outcome import Category, Outcome


@dataclass(frozen=True, kw_only=True)
class OperationCount(Check):
    """The probe call's program performs at most ``at_most`` operations (of ``operation``, or
    of every kind), and with ``grows_with`` (leaf path → axis) no more when those leaves are
    twice as long along those axes."""
    at_most: int | None = None
    operation: str | None = None
    grows_with: Mapping[str, int] | None = None
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        leaves = dict(argument_leaves(probe))
        found = [] if self.at_most is not None or self.grows_with else [
            f"{self.id}: give at_most, grows_with, or both"]
        for path, axis in (self.grows_with or {}).items():
            if path not in leaves or not 0 <= axis < np.ndim(leaves[path]):
                found.append(f"{self.id}: grows_with names {path!r} along axis {axis}, which the probe has not")
        return found

    def judge(self, context: Context) -> Outcome:
        program, why = observed_program(context)
        what = f"{spelled(self.operation)} operations" if self.operation else "operations"
        want = " and ".join(part for part in (
            f"at most {self.at_most} {what}" if self.at_most is not None else "",
            f"no more {what} for a longer {_leaves(self.grows_with)}" if self.grows_with else "") if part)
        if program is None:
            return Outcome.failed(f"The program could not be inspected: {why}.", expected=want, observed=str(why))
        count = self._count(program)
        if self.at_most is not None and count > self.at_most:
            unrolled = (" A Python loop runs (and traces) its body once per step, over the data or over a fixed "
                        "padded length alike; jax.lax.scan, jax.vmap or whole-array operations keep one copy."
                        if self.grows_with else "")
            return Outcome.failed(f"Your program performs {count} {what}; the task allows at most "
                                  f"{self.at_most}.{unrolled}", expected=want, observed=self._observed(program))
        if self.grows_with:
            longer = context.probe
            for path, axis in self.grows_with.items():
                value = dict(argument_leaves(context.probe))[path]
                longer = with_leaf(longer, path, np.concatenate([value, value], axis=axis))
            returned = context.session.call(longer, record="full")
            if not returned.ok or returned.program is None:
                return Outcome.failed(f"On an input twice as long ({_leaves(self.grows_with)}), your function "
                                      f"{returned.describe()}.", expected=want, observed=returned.describe())
            more = self._count(returned.program)
            if more > count:
                return Outcome.failed(
                    f"Your program grows with the input: {count} {what} on the probe, {more} when "
                    f"{_leaves(self.grows_with)} is twice as long. A Python loop over the data runs (and traces) "
                    "its body once per step; jax.lax.scan, jax.vmap or whole-array operations keep one copy.",
                    expected=want, observed=f"{self._observed(program)}; then {self._observed(returned.program)}")
        return Outcome.passed(f"Your program performs {count} {what}" + (
            ", the same for an input twice as long." if self.grows_with else "."))

    def _observed(self, program: Program) -> str:
        """What was counted, with what the program performs by kind."""
        if self.operation is None:
            return census(program)
        return f"{self._count(program)} {spelled(self.operation)} operations, of the program's {census(program)}"

    def _count(self, program: Program) -> int:
        return sum(1 for node in program.nodes if self.operation is None or node.primitive in names_of(self.operation))


def _leaves(grows_with: Mapping[str, int] | None) -> str:
    return ", ".join(f"{path} (axis {axis})" for path, axis in (grows_with or {}).items())
