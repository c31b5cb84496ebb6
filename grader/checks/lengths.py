"""``structure``: a loop's length as a function of the inputs, not a number from the probe.

``UsesPrimitive(operation="scan", params={"length": 9})`` checks the length the probe call
ran, and so passes a loop written for the probe's nine elements (``range(9)``, a padded
length, a constant copied from a test) as readily as one over ``xs.shape[0]``. ``LoopLength``
states the length as the task does, as a function of the arguments (``of=("xs", 0)``: the
length of xs along axis 0; or ``length=lambda a: a["xs"].shape[0] // 2``), checks it on the
probe call and again on a call whose ``vary`` leaves are twice as long along their axes: only a
length computed from the input follows.

A loop JAX sees is a ``scan`` (``jax.lax.scan``, and ``jax.lax.fori_loop`` with bounds known
when tracing, ``range(xs.shape[0])`` included), whose length is part of the program. A
``while`` loop's trip count is a value, which no program states: what can be judged of one is
what it reads (``WhileReads``: the argument as it is, not padded to a fixed length). For a task
that accepts ``fori_loop`` with traced bounds, put the two under ``AnyOf``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import numpy as np

from grader.arguments import Signature, argument_leaves, is_within, with_leaf
from grader.checks.base import Check, Context
from grader.checks.program_checks import observed_program, spelled
from grader.observe.program import Program
from grader.outcome import Category, Outcome

LOOPS = ("scan",)  # the loops whose length the program states


@dataclass(frozen=True, kw_only=True)
class LoopLength(Check):
    """The probe call's program runs a ``scan`` of the length the arguments give (``of``: a
    (leaf, axis) whose size it is; or ``length``: a function of the arguments), reading
    ``reads`` when given; and on a call whose ``vary`` leaves (leaf path → axis; ``of``'s leaf
    when not given) are twice as long, one of the new length."""
    of: tuple[str, int] | None = None
    length: Callable[[dict[str, Any]], int] | None = field(default=None, compare=False)
    vary: Mapping[str, int] | None = None
    reads: str | None = None
    operation: str = "scan"
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        found = []
        if (self.of is None) == (self.length is None):
            found.append(f"{self.id}: give of=(leaf, axis) or length=(a function of the arguments), not both")
        if self.operation not in LOOPS:
            found.append(f"{self.id}: only a {' or '.join(LOOPS)} states its length in the program")
        leaves = dict(argument_leaves(probe))
        for path, axis in self._vary().items():
            if path not in leaves or not 0 <= axis < np.ndim(leaves[path]):
                found.append(f"{self.id}: {path!r} along axis {axis} is no axis of the probe's leaves")
        if not self._vary():
            found.append(f"{self.id}: give vary= (the leaves to lengthen, leaf path -> axis)")
        if not found:
            try:
                self._expected(probe)
            except Exception as error:
                found.append(f"{self.id}: the length function fails on the probe ({type(error).__name__}: {error})")
        return found

    def _vary(self) -> dict[str, int]:
        if self.vary is not None:
            return dict(self.vary)
        return {self.of[0]: self.of[1]} if self.of is not None else {}

    def _expected(self, arguments: dict[str, Any]) -> int:
        if self.of is not None:
            return int(np.shape(dict(argument_leaves(arguments))[self.of[0]])[self.of[1]])
        return int(self.length(arguments))  # type: ignore[misc]

    def _wanted(self) -> str:
        if self.of is not None:
            what = f"the length of {self.of[0]} along axis {self.of[1]}"
        else:
            what = "the length the task computes from the arguments"
        return f"a {spelled(self.operation)} of {what}" + (f" reading {self.reads}" if self.reads else "")

    def _lengths(self, program: Program) -> list[int]:
        """The lengths of the program's loops (those reading ``reads``, when given)."""
        reached = None
        if self.reads is not None:
            reached = program.derived_from(i for p, i in zip(program.input_paths, program.inputs)
                                           if is_within(p, self.reads))
        lengths = []
        for node in program.uses(self.operation):
            length = node.params.get("length")
            if not isinstance(length, int) or isinstance(length, bool):
                continue
            if reached is not None and not reached.intersection(i for i in node.inputs if i is not None):
                continue
            lengths.append(length)
        return lengths

    def judge(self, context: Context) -> Outcome:
        want = self._wanted()
        program, why = observed_program(context)
        if program is None:
            return Outcome.failed(f"The program could not be inspected: {why}.", expected=want, observed=str(why))
        wanted = self._expected(context.probe)
        lengths = self._lengths(program)
        loops = f"{spelled(self.operation)} of length{'s' * (len(lengths) != 1)} " \
                f"{', '.join(map(str, lengths))}" if lengths else f"no {spelled(self.operation)}"
        reading = f" reading {self.reads}" if self.reads else ""
        if wanted not in lengths:
            return Outcome.failed(f"Your program runs {loops}{reading}; on these inputs the task's loop has {wanted} "
                                  "steps.", expected=f"{want}: {wanted} steps", observed=f"{loops}{reading}")
        longer = context.probe
        for path, axis in self._vary().items():
            value = dict(argument_leaves(context.probe))[path]
            longer = with_leaf(longer, path, np.concatenate([value, value], axis=axis))
        again = self._expected(longer)
        returned = context.session.call(longer, record="full")
        if not returned.ok or returned.program is None:
            return Outcome.failed(f"On inputs twice as long ({self._lengthened()}), your function "
                                  f"{returned.describe()}.", expected=want, observed=returned.describe())
        more = self._lengths(returned.program)
        if again not in more:
            seen = ", ".join(map(str, more)) or "none"
            return Outcome.failed(
                f"Your loop's length does not follow the input: {wanted} steps on the probe, but {seen} when "
                f"{self._lengthened()} is twice as long, where the task's loop has {again}. Take the length from "
                "the input (xs.shape[0], or scan over xs itself), not from a number that fits one call.",
                expected=want, observed=f"{loops}{reading}; on longer inputs, lengths {seen} (wanted {again})")
        return Outcome.passed(f"Your program runs a {spelled(self.operation)} of {wanted} steps{reading}, and "
                              f"{again} when {self._lengthened()} is twice as long.")

    def _lengthened(self) -> str:
        return ", ".join(f"{path} (axis {axis})" for path, axis in self._vary().items())


@dataclass(frozen=True, kw_only=True)
class WhileReads(Check):
    """The probe call's program runs a ``while`` loop (``jax.lax.while_loop``, or a
    ``jax.lax.fori_loop`` with traced bounds) that reads the argument leaf ``reads`` as it is: a
    value computed from it, of its shape. A while loop's trip count is a value no program states,
    so this is what can be judged of one: a loop over the input padded to a fixed length, with
    that length as its traced bound, reads an array longer than the input and fails (its values
    stay right, and its program does not grow)."""
    reads: str
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        return [] if self.reads in dict(argument_leaves(probe)) else [
            f"{self.id}: {self.reads!r} is no leaf of the probe's arguments"]

    def judge(self, context: Context) -> Outcome:
        want = tuple(np.shape(dict(argument_leaves(context.probe))[self.reads]))
        wanted = f"a {spelled('while')} reading {self.reads} of shape {want}"
        program, why = observed_program(context)
        if program is None:
            return Outcome.failed(f"The program could not be inspected: {why}.", expected=wanted, observed=str(why))
        reached = program.derived_from(i for p, i in zip(program.input_paths, program.inputs) if is_within(p, self.reads))
        loops = program.uses("while")
        read = sorted({tuple(program.shapes.get(i) or ()) for node in loops for i in node.inputs
                       if i is not None and i in reached})
        if want in read:
            return Outcome.passed(f"Your program runs a {spelled('while')} reading {self.reads} as it is, {want}.")
        observed = (f"a {spelled('while')} reading only values of shape {' or '.join(map(str, read))} computed "
                    f"from {self.reads}" if read else f"a {spelled('while')} reading nothing computed from {self.reads}"
                    if loops else f"no {spelled('while')}")
        return Outcome.failed(f"Your program has {observed}; the task's loop reads {self.reads} as it is, {want}, "
                              f"not padded to a fixed length: loop over {self.reads} itself.",
                              expected=wanted, observed=observed)
