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
from grader.checks.compiled_program import _share, _size, own_programs, unwitnessed
from grader.checks.program_checks import observed_program, spelled
from grader.checks.returns import probe_call
from grader.observe.program import Program
from grader.observe.returned import Returned
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
        found += _vary_problems(self, self._vary(), probe)
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
        longer = lengthened(context.probe, self._vary())
        again = self._expected(longer)
        returned = lengthened_call(context, longer, self._vary())
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


def lengthened(probe: dict[str, Any], vary: Mapping[str, int]) -> dict[str, Any]:
    """The probe with each ``vary`` leaf (path -> axis) twice as long along its axis."""
    longer = probe
    for path, axis in vary.items():
        value = dict(argument_leaves(probe))[path]
        longer = with_leaf(longer, path, np.concatenate([value, value], axis=axis))
    return longer


def lengthened_call(context: Context, longer: dict[str, Any], vary: Mapping[str, int]) -> Returned:
    """The full record of a call on ``longer`` (``lengthened(context.probe, vary)``), made once
    for every check that compares it with the probe's."""
    return context.memo(f"lengthened:{sorted(vary.items())!r}", lambda: context.session.call(longer, record="full"),
                        seed_free=True)


def _vary_problems(check: Check, vary: Mapping[str, int], probe: dict[str, Any]) -> list[str]:
    leaves = dict(argument_leaves(probe))
    found = [f"{check.id}: {path!r} along axis {axis} is no axis of the probe's leaves"
             for path, axis in vary.items() if path not in leaves or not 0 <= axis < np.ndim(leaves[path])]
    return found + ([] if vary else [f"{check.id}: give vary= (the leaves to lengthen, leaf path -> axis)"])


@dataclass(frozen=True, kw_only=True)
class LoopRuns(Check):
    """XLA runs a loop of as many steps as the leaf ``of`` = (path, axis) is long, on the probe
    and on a call whose ``vary`` leaves are twice as long: the trip count of a loop the call ran,
    as the witness compiles its programs (``CompiledProgram.loops``, a bound passed in traced read
    at the call's own value), not the loop as written. A ``while_loop`` that always runs 64 steps
    and masks those past k runs 64 steps; a scan over xs padded to a fixed length runs the
    padding's; a loop of more steps beside one of the right length (a scan of k steps kept alive
    beside a masked loop of 64) fails too. A loop in another loop's body is that loop's work and
    is not read on its own, unless its length is unknown (a ``while_loop`` the data ends, in a scan's
    body): no count of the outer loop bounds it, and it counts as a loop of unknown length beside
    it (``grader.child.compiled.loops_run_once``). A call whose account the witness could not run has no trip count to
    read: the check fails, saying why (``compiled_program.unwitnessed``)."""
    of: tuple[str, int]
    vary: Mapping[str, int]
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        return _vary_problems(self, {self.of[0]: self.of[1], **self.vary}, probe)

    def judge(self, context: Context) -> Outcome:
        steps = int(np.shape(dict(argument_leaves(context.probe))[self.of[0]])[self.of[1]])
        want = f"a loop XLA runs once per element of {self.of[0]} along axis {self.of[1]}"
        longer = lengthened(context.probe, self.vary)
        for arguments, wanted, where in ((context.probe, steps, "on the probe"),
                                         (longer, 2 * steps, f"when {self.of[0]} is twice as long")):
            returned = probe_call(context) if arguments is context.probe else lengthened_call(context, arguments,
                                                                                                self.vary)
            if not returned.ok:
                return Outcome.failed(f"Nothing to judge here: {where}, your function {returned.describe()}.",
                                      expected=want, observed=returned.describe())
            unseen = unwitnessed(returned, want, where)
            if unseen is not None:
                return unseen
            trips = [t for p in returned.programs for t in p.loops]
            longer_than = [t for t in trips if t is None or t > wanted]
            if wanted in trips and longer_than:
                seen = _trips_seen(longer_than)
                return Outcome.failed(
                    f"{where[:1].upper()}{where[1:]} XLA runs a loop of {wanted} steps for your function, one per "
                    f"element of {self.of[0]}, but beside it a loop of {seen}, which does not follow "
                    f"{self.of[0]}: work that always runs more steps than there are elements (masking those past "
                    "them, or over a padded copy) grows with that loop, not with the data. Do the work in the loop "
                    f"over {self.of[0]} itself.",
                    expected=f"{want}: {wanted} steps {where}, and no longer loop beside it",
                    observed=f"loops of {_trips_seen(trips)} {where}")
            if wanted not in trips:
                seen = _trips_seen(trips) if trips else "no loop"
                return Outcome.failed(
                    f"{where[:1].upper()}{where[1:]} there are {wanted} elements of {self.of[0]} (axis {self.of[1]}), "
                    f"but the loops XLA runs for your function run {seen}. One step per element: a loop "
                    "that always runs a fixed number of steps and masks the extra ones, or runs over a padded copy, "
                    f"does work that grows with the padding, not with {self.of[0]}. Loop over {self.of[0]} itself "
                    f"(jax.lax.scan over it, or a loop bound of {self.of[0]}.shape[{self.of[1]}]).",
                    expected=f"{want}: {wanted} steps {where}", observed=f"loops of {seen} {where}")
        return Outcome.passed(f"XLA runs a loop of {steps} steps for your function, and {2 * steps} when "
                              f"{self.of[0]} is twice as long: one per element.")


def _trips_seen(trips: list[int | None]) -> str:
    return ", ".join("a number of steps no program fixes" if t is None else f"{t} steps" for t in trips)


@dataclass(frozen=True, kw_only=True)
class MemoryGrowth(Check):
    """XLA's temporary buffers for the submission's own jitted programs grow, when the ``vary``
    leaves are twice as long, by at most ``fraction`` of the bytes of the argument leaf ``per``
    for each element added along the first of them: a loop carrying a running sum holds one
    ``per``-sized value whatever the length, one that stacks a value per step (``jax.lax.map``,
    a scan that outputs every gradient, then a mean) holds one per step."""
    vary: Mapping[str, int]
    per: str
    fraction: float = 0.5
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        found = _vary_problems(self, self.vary, probe)
        return found + ([] if self.per in dict(argument_leaves(probe)) else [
            f"{self.id}: per={self.per!r} is no leaf of the probe's arguments"])

    def judge(self, context: Context) -> Outcome:
        leaves = dict(argument_leaves(context.probe))
        path, axis = next(iter(self.vary.items()))
        added = int(np.shape(leaves[path])[axis])
        unit = int(np.asarray(leaves[self.per]).nbytes)
        want = (f"temporaries growing by at most {_share(self.fraction)} of {self.per}'s {_size(unit)} per element "
                f"added to {path}")
        before, after = probe_call(context), lengthened_call(context, lengthened(context.probe, self.vary), self.vary)
        for returned, where in ((before, "on the probe"), (after, f"when {path} is twice as long")):
            unseen = unwitnessed(returned, want, where) if returned.ok else None
            if unseen is not None:
                return unseen
            if not returned.ok or not own_programs(returned, True):
                seen = returned.describe() if not returned.ok else "ran no jitted function of its own"
                return Outcome.failed(f"Nothing to judge here: {where}, your function {seen}.", expected=want,
                                      observed=seen)
        temp = [max(p.memory.temp for p in own_programs(r, True)) for r in (before, after)]
        growth = temp[1] - temp[0]
        observed = (f"{_size(temp[0])} of temporaries on the probe, {_size(temp[1])} with {added} more elements of "
                    f"{path}: {_size(max(growth, 0) // max(added, 1))} more per element")
        if growth > self.fraction * unit * added:
            return Outcome.failed(
                f"XLA's temporary buffers for your jitted function grow with the number of elements of {path}: "
                f"{observed}, where {self.per} is {_size(unit)}. The program keeps a value of {self.per}'s size for "
                f"every element (stacked, then reduced), not one running sum in the loop's carry. Add each step's "
                "value to the carry (jax.lax.scan(step, jnp.zeros_like(...), ...)) instead of stacking them all.",
                expected=want, observed=observed)
        return Outcome.passed(f"Your program's temporaries do not grow with {path} beyond what the task allows: "
                              f"{observed}.")
