"""``structure``: the returned value is computed from the placed value, and follows it.

``ResultFromPlacement`` judges a target's placement (``grader.checks.structure``) by what the
function returns: linked to the placed value in the recorded program, and *following* it: with
the placing operations handed other values, the function returns what it returns on those
values (``Session.call(counterfactual=...)``), and the probe call's own operations, run again,
move with it (``Program.replayed``).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from grader.arguments import argument_leaves, flatten, short, with_leaf
from grader.checks.base import Context
from grader.checks.compiled_program import unanswered
from grader.checks.evidence import (VIA_NAME, Evidence, Placement, evidence, host_text, host_work, placed_by,
                                    placements_in)
from grader.checks.returns import probe_call
from grader.checks.structure import StructureCheck, missing_leaf, named, opening
from grader.checks.values import answer_on, arguments_text, compare, format_number, observed
from grader.observe.returned import HostWork, Leaf, Returned
from grader.observe.session import Counterfactual, Unanswered
from grader.outcome import Outcome


@dataclass(frozen=True, kw_only=True)
class ResultFromPlacement(StructureCheck):
    """The returned value (the leaves under ``result``) is computed from the placed value, not
    from the original argument, and not placed afterwards.

    A dataflow link alone proves little (``0 * placed`` is one), so the result must also
    *follow* the placed value: the function is called on other values of the operand (its
    placing operations' inputs captured), then on the original arguments with those captured
    values handed to the same operations (``Session.call(counterfactual=...)``), on the probe
    and on a drawn input of another shape, and must return the same as the first time (its
    own answer, so a value or dtype mistake is not also a structure one). Work on
    the host (callbacks whose results are used, values pulled to NumPy and given back) is
    refused unless ``allow_host``."""
    result: str = "result"
    allow_host: bool = False
    draws_layouts: ClassVar[bool] = False  # what the result is computed from, not where it lives

    def judge(self, context: Context) -> Outcome:
        outcome = super().judge(context)
        if outcome.status != "passed":
            return outcome
        found = evidence(context)
        what = "the result" if self.result == "result" else self.result
        work = None if self.allow_host else host_work(context)
        if work is not None:
            return self._host_failure(work, what)
        if context.values is None or self.target.on_result:
            return outcome
        for leaf in self.leaves(found):
            chosen = self.chosen(found, leaf)
            for arguments, where in self._inputs(context, leaf):
                problem = self._follows(context, arguments, where, leaf, chosen, what)
                if problem is not None:
                    return problem
        return outcome

    def _host_failure(self, work: HostWork, what: str) -> Outcome:
        message = host_text(work, f"{what}, from the placed {self.target.label},")
        return Outcome.failed(message + ".", expected=f"{what} computed by JAX from the placed {self.target.label}",
                              observed=work.call)

    def _inputs(self, context: Context, leaf: str) -> list[tuple[dict[str, Any], str]]:
        """The probe, and the smallest drawn input where ``leaf`` has another shape and every
        leaf holds several distinct values (Hypothesis draws zeros first: on them a product or
        a step cannot tell one operand's values from another's)."""
        probe_shape = np.shape(dict(argument_leaves(context.probe)).get(leaf))
        candidates = []
        for arguments in context.draw(context.values):
            leaves = dict(argument_leaves(arguments))
            if leaf in leaves and np.shape(leaves[leaf]) != probe_shape and all(
                    np.size(v) and len(np.unique(np.asarray(v))) > 1 for v in leaves.values()):
                candidates.append((sum(np.size(v) for v in leaves.values()), len(candidates), arguments))
        if not candidates:
            return [(context.probe, "")]
        smallest = min(candidates)[2]  # the shortest to show in a message
        return [(context.probe, ""), (smallest, f"On another input ({arguments_text(smallest)}), ")]

    def _follows(self, context: Context, arguments: dict[str, Any], where: str, leaf: str,
                 chosen: Placement | None, what: str) -> Outcome | None:
        """None when the result follows the placed ``leaf``: called on ``arguments`` with its
        placements handed what they received when ``leaf`` held other values, the function
        returns what it returned then. (Its own answer, not the task's: a value mistake, or a
        dtype one, is the value and type checks' to judge, once.)"""
        label = named(leaf, self.target)
        via = placed_by(chosen) if chosen is not None else VIA_NAME[self.target.via]
        capture, feed = _counterfactuals(evidence(context), leaf, chosen, arguments)
        before = probe_call(context) if arguments is context.probe else _call(context, arguments)
        for other in _other_values(dict(argument_leaves(arguments)).get(leaf)):
            changed = with_leaf(arguments, leaf, other)
            tolerance = answer_on(context.values, changed)[1]
            direct = context.session.call(changed, counterfactual=capture)
            if not (direct.ok and before.ok) or _difference(direct, before, tolerance) is None:
                continue  # these values change nothing the function returns: they cannot tell
            if direct.swapped == 0:  # nothing placed the judged way with these values
                if not where:
                    return None  # placed inside a transformation: the link stands
                seen = f"your function placed nothing the way it placed {label} on the probe input"
                return Outcome.failed(f"{where}{seen}. The task asks for {what} computed from the placed {label} "
                                      "on every input.", expected=f"{what} computed from the placed {label}",
                                      observed=seen)
            if arguments is context.probe and chosen is not None and chosen.via == "device_put" and not chosen.within:
                problem = _witnessed_replay(context, leaf, chosen.sharding, other, direct, tolerance, label, via,
                                            what, self.result)
                if problem is not None:
                    return problem
            # the probe call's own operations run again: the function never knows (a witness that can
            # only fail it: a forged record can make a replay look honest, the feeding call below cannot)
            replayed = _replayed(context, chosen, leaf, self.result) if arguments is context.probe else None
            if replayed in ("unchanged", "still"):
                return _replay_failure(replayed, where, label, what, via, other, self.result,
                                       bool(chosen is not None and chosen.within))
            fed = context.session.call(arguments, counterfactual=feed)
            if fed.ok and fed.host and not self.allow_host:
                return self._host_failure(fed.host[0], what)
            difference = _difference(fed, direct, tolerance) if fed.ok else f"it {fed.describe()}"
            if difference is None:
                return None
            lead = f"{what} does not follow the placed {label}"
            return Outcome.failed(
                f"{where}{lead if where else opening(lead, self.result)}: with {label} unchanged but {via} "
                f"handed what your function places for {label} = {short(other)}, {difference}, the latter being "
                f"its answer on that {label}. So {what} is "
                f"not computed from the placed {label}: it is recomputed from the original {label} (on the host "
                f"or in a separate JAX computation), or reaches the placed {label} only through a link that "
                f"carries nothing (such as 0 * the placed array). Compute {what} from what {via} returns.",
                expected=f"{what} following the placed {label}: with {via} handed what it places for {label} = "
                         f"{short(other)}, your function's answer on that {label} ({observed(direct)})",
                observed=f"with {via} handed what it places for {label} = {short(other)}, {difference}",
                counterexample=f"{label} = {short(other, 64)}")
        return None

    def judge_placement(self, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        label = named(leaf, self.target)
        what = "the result" if self.result == "result" else self.result
        if chosen.placed is not None and found.program is not None and found.program.feeds(chosen.placed, self.result):
            return Outcome.passed(f"{opening(what, self.result)} is computed from the placed {label}.")
        absent = missing_leaf(found.program, self.result)
        if absent is not None:
            return Outcome.failed(f"{opening(absent, self.result)}, so nothing returned can be computed from the placed "
                                  f"{label}. Return {self.result} as the task declares it.",
                                  expected=f"{what} computed from the placed {label}", observed=absent)
        if found.not_jax:
            observed = (f"{what} is {found.not_jax}, not a JAX array: a value that leaves JAX (NumPy, float()) "
                        f"carries no link to the placed {label}")
            return Outcome.failed(f"{opening(observed, self.result)}. Return the JAX array computed from the "
                                  f"placed {label}.",
                                  expected=f"{what} computed from the placed {label}", observed=observed)
        observed = (f"{what} is not computed from what {placed_by(chosen)} returned for {label}; that placed "
                    "copy is never used")
        return Outcome.failed(f"{opening(observed, self.result)}. Compute {what} from the placed {label} "
                              f"({placed_by(chosen)} gives it), and place before computing, not after.",
                              expected=f"{what} computed from the placed {label}", observed=observed)


def _witnessed_replay(context: Context, leaf: str, sharding: dict[str, Any], other: np.ndarray, direct: Returned,
                      tolerance: Any, label: str, via: str, what: str, result: str) -> Outcome | None:
    """The probe call's own operations, run again by the witness (no Python of the submission's
    runs, so nothing can notice) with every eager placement of ``leaf`` onto ``sharding`` holding
    ``other``: they must give what the function returns when called on ``other`` (``direct``),
    and, for a function right on the probe, the exercise's answer on ``other``
    (``_answer_difference``). A result computed from the original, plus a term that is zero only
    while the placed copy equals it, moves with the placed copy without being computed from it.
    None when they do, or where the witness cannot say."""
    order = [path for name in context.session.parameters for path, _ in argument_leaves({name: context.probe[name]})]
    replayed = context.session.replay_placed(probe_call(context), context.probe, order.index(leaf), sharding, other) \
        if leaf in order else None
    if replayed is None:
        return None
    if isinstance(replayed, Unanswered):
        return unanswered(replayed.why, f"{what} computed from the placed {label}, shown by running your function's "
                                        f"operations again with the placed {label} changed")
    difference = _difference(Returned(True, leaves=replayed), direct, tolerance)
    whose = "what your function returns on those values"
    if difference is None:
        difference, whose = _answer_difference(context, leaf, other, replayed), "the task's answer on those values"
        if difference is None:
            return None
    seen = (f"the operations your function ran, run again with the placed {label} holding other values "
            f"({short(other)}) and {label} itself unchanged (by the grader, where no code of yours runs), do not give "
            f"{whose}: {difference.replace('it returned', 'they give', 1).replace('your function returned', 'they give')}")
    return Outcome.failed(
        f"{opening(f'{what} does not follow the placed {label}', result)}: {seen}. So {what} is not computed from "
        f"the placed {label} alone: it is computed again from the original {label}, or mixes it in, or reaches the "
        f"placed {label} only through a link that carries nothing (such as 0 * the placed array). Compute {what} "
        f"from what {via} returns.",
        expected=f"{what} computed from the placed {label}: your function's answer on whatever it holds "
                 f"({observed(direct)})", observed=seen, counterexample=f"{label} = {short(other, 64)}")


def _answer_difference(context: Context, leaf: str, other: np.ndarray, replayed: tuple[Leaf, ...]) -> str | None:
    """Where the witness's replay with the placed ``leaf`` holding ``other`` differs from the
    exercise's answer on those values, or None. Judged only for a function whose answer on the
    probe is the exercise's (a value mistake is the value checks' to judge, once): then its own
    operations fed other values must give the answer for them. Its own answer on them, which
    the replay is compared with first, comes from a call in its own process, which can notice
    the grader's values and agree with whatever the replay will give; the exercise's answer
    cannot."""
    if context.values is None:
        return None
    if compare(probe_call(context), *answer_on(context.values, context.probe)) is not None:
        return None
    answer, tolerance = answer_on(context.values, with_leaf(context.probe, leaf, other))
    return compare(Returned(True, leaves=replayed), answer, tolerance)


def _other_values(value: Any) -> list[np.ndarray]:
    """Values of ``value``'s shape and dtype, each differing from it in every element, for a
    counterfactual call: two affine maps (should one leave the function's answer unchanged)."""
    if not isinstance(value, np.ndarray) or value.size == 0:
        return []
    if value.dtype.kind == "b":
        return [~value]
    if value.dtype.kind in "iu":
        return [value + 1, value * 2 + 3]
    if value.dtype.kind == "f":
        wide = value.astype(np.float64)
        return [(1.25 - 0.5 * wide).astype(value.dtype), (2.0 * wide + 3.0).astype(value.dtype)]
    return []


def _counterfactuals(found: Evidence, leaf: str, chosen: Placement | None,
                     arguments: dict[str, Any]) -> tuple[Counterfactual, Counterfactual]:
    """The capturing and feeding calls for ``leaf`` on ``arguments``. When the placement judged
    is an eager device_put, only it counts: onto its sharding, shaped like the operand when it
    is, and its turn among such device_puts in the probe call (a timing loop places x three
    times and uses the last; a probe-only honest function places its result the same way)."""
    if chosen is None or chosen.via != "device_put" or chosen.within:
        return Counterfactual(True), Counterfactual(False)
    shaped = chosen.shape == found.probe_shapes.get(leaf)
    alike = [p for p in found.placements if p.via == "device_put" and not p.within and p.sharding == chosen.sharding
             and (not shaped or p.shape == chosen.shape)]
    shape = tuple(np.shape(dict(argument_leaves(arguments)).get(leaf))) if shaped else None
    turn = next((i for i, p in enumerate(alike) if p is chosen), None)
    return (Counterfactual(True, chosen.sharding, shape, turn), Counterfactual(False, chosen.sharding, shape, turn))


# Placements inside a jitted program the probe call's replay replaces (``grader.child.replay.Inside``).
INSIDE_REPLAYED = ("constraint", "device_put")


def _replayed(context: Context, chosen: Placement | None, leaf: str, result: str) -> str | None:
    """The probe call's replay of the judged eager device_put of ``leaf``, or of its judged
    placement inside a jitted program (the first onto the same sharding, the same way, placing
    ``leaf`` as the judged one did: see ``grader.child.replay``):
    what became of what the function returned when the placed value held other values
    (``Program.replayed``); None
    when it was not replayed (a placement inside a transformation, a round trip through the
    host). The probe's alone: its record is the one the placement was judged from."""
    call = probe_call(context)
    eager = chosen is not None and chosen.via == "device_put" and not chosen.within
    if not (eager or chosen is not None and chosen.via in INSIDE_REPLAYED and chosen.within) or call.program is None:
        return None
    shapes = {path: tuple(np.shape(value)) for path, value in argument_leaves(context.probe)}
    same = next((p for p in placements_in(call.program, shapes) if p.via == chosen.via and p.within == chosen.within
                 and p.sharding == chosen.sharding and p.relation.get(leaf) == chosen.relation.get(leaf)), None)
    return None if same is None or same.placed is None else call.program.replayed(same.placed, result)


def _replay_failure(replayed: str, where: str, label: str, what: str, via: str, other: Any, result: str,
                    inside: bool) -> Outcome:
    """What a replay that ``what`` did not follow says: with the placed value holding other
    values (``"unchanged"``) or moved by an infinitesimal step (``"still"``); ``inside``: the
    placement was inside a jitted program, whose run again the replay was."""
    if inside:
        ran, placed = "your jitted function", f"{label} (the value it places with {via})"
        returned, shown = "returns what it returned before", ""
    else:
        ran, placed = "the operations your function ran", f"the placed {label}"
        returned = ("return what they returned before, although your function called on those values returns "
                    "something else")
        shown = f" ({short(other)})"
    if replayed == "unchanged":
        seen = f"{ran}, run again with {placed} holding other values{shown} and nothing else changed, {returned}"
    else:
        seen = (f"{ran}, run again at the very values of your call with only {placed} moved by an infinitesimal "
                f"step (a derivative, which no comparison in your code can tell from an ordinary call), "
                f"{'leaves' if inside else 'leave'} {what} where it was: at the values it was called with, the answer "
                f"does not depend on {placed}")
    source = f"{label} as placed" if inside else f"the placed {label}"
    return Outcome.failed(
        f"{where}{opening(f'{what} does not follow {source}', result) if not where else ''}"
        f"{': ' if not where else ''}{seen}. So {what} is not computed from {source}: it is computed again from "
        f"the original, or reaches {source} only through a link that carries nothing (such as 0 * the placed "
        f"array). Compute {what} from what {via} returns.",
        expected=f"{what} computed from {source}", observed=seen,
        counterexample=None if inside else f"{label} = {short(other, 64)}")


def _call(context: Context, arguments: dict[str, Any]) -> Returned:
    """The function's answer on ``arguments``: the value checks' call if they made it."""
    made = next((r for a, r in context.session.calls if a is arguments), None)
    return made if made is not None else context.session.call(arguments)


def _fits(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def _difference(got: Returned, want: Returned, tolerance: Any) -> str | None:
    """None when every leaf ``got`` returned equals ``want``'s within ``tolerance`` (one
    number, an array, or a tree shaped like the answer); else where they first differ."""
    limits = dict(flatten(tolerance, "result")) if isinstance(tolerance, (Mapping, tuple, list)) else None
    wanted = {leaf.path: leaf for leaf in want.leaves}
    if set(wanted) != {leaf.path for leaf in got.leaves}:
        return f"it returned {got.describe().removeprefix('returned ')}, not {want.describe().removeprefix('returned ')}"
    for leaf in got.leaves:
        other = wanted[leaf.path]
        at = "it returned" if leaf.path == "result" else f"{leaf.path} is"
        if leaf.array is None or other.array is None or leaf.array.shape != other.array.shape \
                or leaf.array.dtype.kind not in "biuf" or other.array.dtype.kind not in "biuf":
            if leaf.describe() != other.describe():
                return f"{at} {leaf.describe()}, not {other.describe()}"
            continue
        a, b = leaf.array.astype(np.float64), other.array.astype(np.float64)
        limit = np.asarray(limits.get(leaf.path, 0.0) if limits is not None else tolerance, np.float64)
        if not _fits(limit.shape, a.shape):  # not the answer's shape (a type mistake): its largest bound
            limit = np.asarray(np.max(limit, initial=0.0))
        with np.errstate(invalid="ignore", over="ignore"):
            same = (a == b) | (np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= limit)
        if not np.all(same):
            index = tuple(int(i) for i in np.argwhere(~np.broadcast_to(same, a.shape))[0])
            where = f" at index {index[0] if len(index) == 1 else index}" if index else ""
            return f"{at} {format_number(float(a[index]))}{where}, not {format_number(float(b[index]))}"
    return None
