"""``structure``: what XLA compiled for the probe call, and what each device holds.

The values cannot tell an all-reduce followed by a slice from a reduce-scatter, nor a step
that keeps every intermediate for its backward pass from one that recomputes them
(``jax.checkpoint``): the numbers are the same, the traffic and the memory are not. These
checks read the XLA programs the probe call really ran (``grader.child.compiled``: the
collectives of each, their bytes, its memory per device; JAX's programs for eager operations
included), and the shards of what the function returned.

Budgets are in bytes per device, given as ``at_most_bytes`` or as a ``fraction`` of the bytes
of one of the probe's arguments (``of="grads"``) or of what the probe call returned
(``of="result"``, ``of="result[1]"``: "at most one output's bytes moved per device"), which
keeps a budget right when the probe's shapes change. With ``own_only`` the collective checks
read only the programs of the submission's own jitted functions: not the programs JAX runs for
eager operations, nor those of functions defined outside the submission (the grader's, a
library's).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Literal

import numpy as np

from grader.arguments import Signature, argument_leaves, is_within
from grader.checks.base import Check, Context
from grader.child.account import MAX_STEPS
from grader.checks.program_checks import collectives_in_while, observed_program, operation_of, spelled
from grader.checks.returns import probe_call
from grader.observe.program import Node
from grader.observe.returned import COLLECTIVE_KINDS, CompiledProgram, Leaf, Returned
from grader.outcome import Category, Outcome
from grader.wire import itemsize

MemoryKind = Literal["peak", "temp", "argument", "output"]


@dataclass(frozen=True, kw_only=True)
class _Budget(Check):
    """A limit in bytes: ``at_most_bytes``, or ``fraction`` of the bytes of the probe's leaf ``of``
    (an argument leaf, or a returned one: ``result``, ``result[0]``)."""
    at_most_bytes: int | None = None
    of: str | None = None
    fraction: float | None = None
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        if (self.at_most_bytes is None) == (self.of is None or self.fraction is None):
            return [f"{self.id}: give at_most_bytes, or of= and fraction= (a share of an argument's bytes)"]
        leaves = dict(argument_leaves(probe))
        if self.of is not None and is_within(self.of, "result"):
            from grader.arguments import flatten_spec
            paths = [p for p, _ in flatten_spec(signature.returns, "result")]
            return [] if self.of in paths else [f"{self.id}: of={self.of!r} is no leaf of the declared return "
                                                f"({', '.join(paths)})"]
        if self.of is not None and not isinstance(leaves.get(self.of), np.ndarray):
            return [f"{self.id}: of={self.of!r} is no array leaf of the probe (leaves: {', '.join(leaves)})"]
        return []

    def limit(self, probe: dict[str, Any], returned: Returned | None = None) -> tuple[int, str]:
        """The budget in bytes, and in words; one relative to a returned leaf reads ``returned``
        (the probe call's reply: a leaf it did not return makes the budget 0 bytes)."""
        if self.at_most_bytes is not None:
            return self.at_most_bytes, _size(self.at_most_bytes)
        if is_within(self.of, "result"):
            leaf = returned.leaf(self.of) if returned is not None and returned.ok else None
            whole = leaf_bytes(leaf) if leaf is not None else 0
        else:
            whole = dict(argument_leaves(probe))[self.of].nbytes
        return int(whole * self.fraction), (f"{_size(int(whole * self.fraction))} ({_share(self.fraction)} of the "
                                            f"{_size(whole)} of {self.of})")


@dataclass(frozen=True, kw_only=True)
class UsesCollective(Check):
    """The probe call's XLA programs run a ``kind`` collective, and none of ``instead_of``
    (a reduce-scatter, not an all-reduce followed by a slice)."""
    kind: str
    instead_of: tuple[str, ...] = ()
    own_only: bool = False
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        unknown = [k for k in (self.kind, *self.instead_of) if k not in COLLECTIVE_KINDS]
        return [f"{self.id}: unknown collective {k!r} (XLA's are {', '.join(COLLECTIVE_KINDS)})" for k in unknown]

    def judge(self, context: Context) -> Outcome:
        returned = probe_call(context)
        want = _a(self.kind) + (f" and no {' or '.join(self.instead_of)}" if self.instead_of else "")
        if not returned.ok:
            return Outcome.failed(f"Nothing to judge here: your function {returned.describe()}.", expected=want,
                                  observed=returned.describe())
        unseen = unwitnessed(returned, want)
        if unseen is not None:
            return unseen
        ran = _collectives(own_programs(returned, self.own_only))
        observed = _listed(ran) or "no collective"
        refused = [entry for entry in ran if entry[0] in self.instead_of]
        if refused:
            kind, size, program = refused[0]
            return Outcome.failed(
                f"XLA compiled your function into {_a(kind)} of {_size(size)} per device ({program}), where the task "
                f"asks for {_a(self.kind)}. Everything it ran: {observed}.", expected=want, observed=observed)
        if not any(entry[0] == self.kind for entry in ran):
            return Outcome.failed(f"XLA's programs for your function run {observed}, and no {self.kind}.",
                                  expected=want, observed=observed)
        return Outcome.passed(f"XLA's programs for your function run {observed}.")


@dataclass(frozen=True, kw_only=True)
class CommunicatesAtMost(_Budget):
    """Over the probe call, the collectives of every XLA program it ran (with ``own_only``, of
    the submission's own jitted functions) produce at most the budget's bytes per device (each
    run of a program counts)."""
    own_only: bool = False

    def judge(self, context: Context) -> Outcome:
        returned = probe_call(context)
        limit, words = self.limit(context.probe, returned)
        want = f"at most {words} moved by collectives, per device" + (" in your own jitted functions"
                                                                       if self.own_only else "")
        if not returned.ok:
            return Outcome.failed(f"Nothing to judge here: your function {returned.describe()}.", expected=want,
                                  observed=returned.describe())
        unseen = unwitnessed(returned, want)
        if unseen is not None:
            return unseen
        programs = own_programs(returned, self.own_only)
        moved = sum(program.communicated for program in programs)
        observed = f"{_size(moved)} per device: {_listed(_collectives(programs)) or 'no collective'}"
        looped = written_in_unknown_loop(context, programs)
        if looped:
            written = spelled(operation_of(looped[0].primitive))
            return Outcome.failed(
                f"Your function writes {written} inside a jax.lax.while_loop whose number of steps depends on the data, "
                f"so as written it runs an unbounded number of times and the bytes it moves have no bound (XLA's "
                f"programs for this call move {observed}); the task allows at most {words}. Give the loop a fixed "
                "number of steps (jax.lax.fori_loop with Python integers, jax.lax.scan) or move the collective out "
                f"of it.", expected=want,
                observed=f"no bound ({observed}; {written} written in a while_loop of unknown length)")
        if any(program.unbounded for program in programs):
            return Outcome.failed(f"Your function's collectives move {observed}, and one of them runs in a loop whose "
                                  f"number of steps depends on the data, so the bytes it moves have no bound; the task "
                                  f"allows at most {words}.", expected=want, observed=f"no bound ({observed})")
        if moved > limit:
            return Outcome.failed(f"Your function's collectives move {observed}; the task allows at most {words}.",
                                  expected=want, observed=observed)
        return Outcome.passed(f"Your function's collectives move {observed} (at most {words}).")


@dataclass(frozen=True, kw_only=True)
class DeviceMemoryAtMost(_Budget):
    """Each XLA program of the probe call needs at most the budget per device: its ``peak``
    (arguments, outputs and temporaries) or only its ``temp`` buffers, to which ``temp`` adds
    what the call's programs handed each other (a computation split into programs keeps its
    intermediates there: the budget is the call's, not one program's). With ``require_jit``
    one of them is the submission's own jitted function (eager work leaves its intermediates
    in arrays between programs, where no program's figure shows them). ``argument`` and
    ``output`` bound what a program takes in and gives out per device (an FSDP step that
    receives the whole weights on every device has the figure of a replicated one). With
    ``own_only`` only the submission's own jitted functions' programs are measured (JAX's
    programs for eager work, such as splitting an argument onto the mesh, are not)."""
    kind: MemoryKind = "peak"
    require_jit: bool = True
    own_only: bool = False

    def judge(self, context: Context) -> Outcome:
        returned = probe_call(context)
        limit, words = self.limit(context.probe, returned)
        what = _MEMORY_TEXT[self.kind]
        want = f"at most {words} of {what} per device"
        if not returned.ok:
            return Outcome.failed(f"Nothing to judge here: your function {returned.describe()}.", expected=want,
                                  observed=returned.describe())
        unseen = unwitnessed(returned, want)
        if unseen is not None:
            return unseen
        if self.require_jit and not any(program.own for program in returned.programs):
            return Outcome.failed(
                "None of your own jitted functions ran, so the memory your computation needs cannot be measured: "
                "compute it inside one jax.jit function.", expected=want, observed="no jax.jit function of yours ran")
        largest = max(own_programs(returned, self.own_only), key=self._bytes, default=None)
        if largest is None:
            return Outcome.failed("Your function ran no XLA program to measure.", expected=want,
                                  observed="no program")
        used = self._bytes(largest)
        observed = f"{_size(used)} of {what} per device in {largest.function}"
        if self.kind == "temp" and returned.between_bytes:  # a computation split into programs keeps them
            used += returned.between_bytes
            observed += (f", plus {_size(returned.between_bytes)} held between your programs (arrays one of them "
                         "made and a later one read)")
        if used > limit:
            return Outcome.failed(f"{observed[0].upper()}{observed[1:]}; the task allows at most {words}.",
                                  expected=want, observed=observed)
        return Outcome.passed(f"At most {observed} (the budget: {words}).")

    def _bytes(self, program: CompiledProgram) -> int:
        return program.memory.peak if self.kind == "peak" else getattr(program.memory, self.kind)


@dataclass(frozen=True, kw_only=True)
class HoldsAtMostPerDevice(Check):
    """Each device holds at most ``fraction`` of the returned leaf ``leaf``'s bytes, whatever
    the mesh, the spec or the order of the devices."""
    fraction: float
    leaf: str = "result"
    category: ClassVar[Category] = "structure"

    def judge(self, context: Context) -> Outcome:
        returned = probe_call(context)
        named = "your result" if self.leaf == "result" else self.leaf  # a single returned array's leaf
        want = f"each device holding at most {_share(self.fraction)} of {named}"
        found = returned.leaf(self.leaf) if returned.ok else None
        if found is None or found.kind != "jax_array" or not found.shards:
            observed = returned.describe() if not returned.ok else (
                f"{named} is {found.describe()}" if found is not None else f"no {self.leaf} was returned")
            return Outcome.failed(f"Nothing to judge here: {observed}.", expected=want, observed=observed)
        per_device = _bytes_per_device(found)
        total = leaf_bytes(found)
        device, most = max(per_device.items(), key=lambda item: item[1])
        spread = f"{len(per_device)} device" + ("" if len(per_device) == 1 else "s")
        observed = (f"device {device} holds {_size(most)} of the {_size(total)} of {named} "
                    f"({_share(most / total if total else 0.0)} of it), over {spread}")
        if most > self.fraction * total:
            return Outcome.failed(f"{observed[0].upper()}{observed[1:]}: the task allows each device at most "
                                  f"{_share(self.fraction)} of it. Split it over more devices, or along more of its "
                                  "axes.", expected=want, observed=observed)
        return Outcome.passed(f"The most any device holds: {observed}.")


_MEMORY_TEXT = {"peak": "memory at its peak", "temp": "temporary buffers", "argument": "arguments",
                "output": "outputs"}


def unwitnessed(returned: Returned, expected: str, where: str = "") -> Outcome | None:
    """The failure of a check whose verdict rests on what the witness compiled and held (the
    programs' collectives, memory and loops, the arrays held between them) on a call whose
    account it could not run: those facts then come only from the submission's own process,
    which could have written them, so they earn nothing; None for a call it ran."""
    return None if returned.unverified is None else unanswered(returned.unverified, expected, where)


def unanswered(why: str, expected: str, where: str = "") -> Outcome:
    """The failure of a check whose verdict rests on the witness, which gave no answer (``why``:
    it could not run the account, crashed, was killed or ran out of time). Not an accusation:
    the message says why and what to change."""
    observed = f"the grader could not run your call's programs again ({why})"
    return Outcome.failed(
        f"{where[:1].upper()}{where[1:]}{', t' if where else 'T'}he grader could not re-derive what your call computed: "
        f"it runs the programs your call ran again, in a process of its own, and could not run these ({why}). What "
        "this check reads is taken only from that rerun, so it cannot be judged. This says nothing against your "
        f"code. Put the computation in jax.jit functions (a few jitted programs, not more than {MAX_STEPS} eager "
        "operations), without host callbacks or custom kernels, and make them finish on any values.",
        expected=expected, observed=observed, hint_applies=False)


def written_in_unknown_loop(context: Context, programs: tuple[CompiledProgram, ...]) -> list[Node]:
    """The collectives the probe call's program writes inside a ``while_loop``, where its XLA
    ``programs`` run a loop whose trip count XLA does not know (one whose condition reads data,
    in any body); [] otherwise, or where the program cannot be read. Each runs as many times as
    the data says: XLA may move one out of the loop when what it sends does not change between
    steps, and then the compiled program runs it once, but what the code says bounds nothing (a
    second step with a carry read, another compiler, and it runs every step)."""
    if not any(None in program.loops or program.unbounded for program in programs):
        return []
    program, _ = observed_program(context)
    return collectives_in_while(program) if program is not None else []


def own_programs(returned: Returned, own_only: bool) -> tuple[CompiledProgram, ...]:
    """The XLA programs a call ran; with ``own_only``, those of the submission's own jitted functions."""
    return tuple(p for p in returned.programs if p.own or not own_only)


def leaf_bytes(leaf: Leaf) -> int:
    """The bytes of a returned leaf, all of it (0 for one that is no array)."""
    return _itemsize(leaf.dtype) * int(np.prod(leaf.shape)) if leaf.shape is not None else 0


def _bytes_per_device(leaf: Leaf) -> dict[int, int]:
    size = _itemsize(leaf.dtype)
    held: dict[int, int] = {}
    for shard in leaf.shards:
        count = 1
        for start, stop in shard.get("index", ()):
            count *= max(0, int(stop) - int(start))
        device = int(shard.get("device", -1))
        held[device] = held.get(device, 0) + count * size
    return held


def _itemsize(dtype: str | None) -> int:
    # A dtype NumPy cannot name (a structured one) counts its elements: the shares stay right.
    return itemsize(dtype or "float32") or 1


def _collectives(programs: tuple[CompiledProgram, ...]) -> list[tuple[str, int, str]]:
    """(kind, bytes per device, where) of each collective the programs hold."""
    return [(c.kind, c.bytes, program.function + (", in a loop of unknown length" if c.times is None else
                                                  f", {c.times} times a run, in a loop" if c.times > 1 else "")
             + (f", run {program.runs} times" if program.runs > 1 else ""))
            for program in programs for c in program.collectives]


def _listed(ran: list[tuple[str, int, str]]) -> str:
    shown = [f"{_a(kind)} of {_size(size)} ({where})" for kind, size, where in ran[:4]]
    return ", ".join(shown) + (f" and {len(ran) - 4} more" if len(ran) > 4 else "")


def _a(kind: str) -> str:
    return f"an {kind}" if kind.startswith("all") else f"a {kind}"


def _share(fraction: float) -> str:
    """``0.125`` as "1/8", ``0.75`` as "3/4", ``1`` as "all", ``0.01`` as "0.01" (denominators up to 64, exactly)."""
    if fraction == 1:
        return "all"
    exact = Fraction(fraction).limit_denominator(64)
    if 0 < fraction < 1 and float(exact) == fraction:
        return f"{exact.numerator}/{exact.denominator}"
    return f"{fraction:.3g}"


def _size(count: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count} bytes"
