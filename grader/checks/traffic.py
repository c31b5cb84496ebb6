"""``structure``: how many collectives a call runs, and how much of an argument each device holds.

A collective named by the task ("one psum over 'model'") is judged by presence elsewhere
(``UsesPrimitive``); a second psum, or an all-reduce run once per loop step, gives the same
numbers and moves twice the bytes. ``CollectiveCount`` counts them: a collective of the
program the probe call ran, as the student wrote it (``"psum"``, ``"all_gather"``: psum and
pmean told apart by meaning, as in ``grader.checks.program_checks``), or one XLA runs
(``"all-reduce"``, ``"all-gather"``: each run of each program, each iteration of a loop that
holds it), exactly, at least or at most so many.

Bytes per device are read for what a function returns (``HoldsAtMostPerDevice``) and for what
XLA's programs take in and move (``grader.checks.compiled_program``); ``PlacedAtMostPerDevice``
reads them for what the function *placed*: every placement of an argument (or of a copy of it)
by ``jax.device_put`` (or the ways ``via`` names) holds at most ``fraction`` of its bytes on any
one device. An FSDP step that stores its weights split but places a second, replicated copy
"to be safe" holds all of them everywhere. A copy need not be made by a placement the record
names (``jax.make_array_from_callback``, ``jnp.array(w, device=...)``, a jitted identity with
replicated ``out_shardings``): every array of the argument's size the call held between its
programs, or left alive after it, counts too, as the witness placed it again from the call's
account (``Returned.held``: its buffers, not the way it was spelled).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from grader.arguments import Signature, argument_leaves
from grader.checks.base import Check, Context
from grader.checks.compiled_program import _share, _size, own_programs, unwitnessed, written_in_unknown_loop
from grader.checks.evidence import VIA_NAME, evidence
from grader.checks.program_checks import (ALIASES, _axes, axis_sizes, mean_of, names_of, observed_program,
                                          operation_of, spelled)
from grader.checks.returns import probe_call
from grader.checks.shardings import blocks_of, sharding_text
from grader.observe.program import Node, Program
from grader.observe.returned import COLLECTIVE_KINDS
from grader.outcome import Category, Outcome


# The collective XLA runs for each collective as written (psum and pmean reduce alike).
EXECUTED_AS = {"psum": "all-reduce", "pmean": "all-reduce", "all_gather": "all-gather",
               "psum_scatter": "reduce-scatter", "ppermute": "collective-permute", "all_to_all": "all-to-all"}


@dataclass(frozen=True, kw_only=True)
class CollectiveCount(Check):
    """The probe call runs ``operation`` exactly ``exactly`` times (or at least ``at_least``,
    at most ``at_most``). ``operation`` is a collective as written (a key of
    ``program_checks.ALIASES``, counted in the call's program, over exactly ``axes`` when
    given) or one XLA runs (``"all-reduce"``, ...: counted in the XLA programs the call ran,
    every run and loop iteration; with ``own_only``, only in the submission's own jitted
    functions' programs)."""
    operation: str
    exactly: int | None = None
    at_least: int | None = None
    at_most: int | None = None
    axes: tuple[str, ...] | None = None
    own_only: bool = False
    category: ClassVar[Category] = "structure"

    @property
    def compiled(self) -> bool:
        return self.operation in COLLECTIVE_KINDS

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        found = []
        if self.operation not in ALIASES and not self.compiled:
            found.append(f"{self.id}: unknown collective {self.operation!r} (as written: {', '.join(ALIASES)}; "
                         f"as XLA runs them: {', '.join(COLLECTIVE_KINDS)})")
        if self.exactly is None and self.at_least is None and self.at_most is None:
            found.append(f"{self.id}: give exactly, at_least or at_most")
        if self.exactly is not None and (self.at_least is not None or self.at_most is not None):
            found.append(f"{self.id}: exactly cannot be given with at_least or at_most")
        if self.compiled and self.axes is not None:
            found.append(f"{self.id}: axes= names mesh axes, which only a collective as written has")
        return found

    def _wanted(self) -> str:
        what = self.operation if self.compiled else spelled(self.operation)
        if self.axes is not None:
            what += f" over axis {', '.join(map(repr, self.axes))}"
        if self.exactly is not None:
            bound = f"exactly {self.exactly}"
        else:
            bound = " and ".join(part for part in (f"at least {self.at_least}" if self.at_least is not None else "",
                                                   f"at most {self.at_most}" if self.at_most is not None else "")
                                 if part)
        return f"{bound} {what}" + (" in your own jitted functions" if self.own_only else "")

    def judge(self, context: Context) -> Outcome:
        want = self._wanted()
        if self.compiled:
            returned = probe_call(context)
            if not returned.ok:
                return Outcome.failed(f"Nothing to judge here: your function {returned.describe()}.", expected=want,
                                      observed=returned.describe())
            unseen = unwitnessed(returned, want)
            if unseen is not None:
                return unseen
            count, observed = self._run(returned)
            looped = [n for n in written_in_unknown_loop(context, own_programs(returned, self.own_only))
                      if EXECUTED_AS.get(operation_of(n.primitive)) == self.operation]
            if looped:
                count = None
                observed += f", and {spelled(operation_of(looped[0].primitive))} written"  # "... inside a loop ..."
            where = "XLA's programs for your function run"
        else:
            program, why = observed_program(context)
            if program is None:
                return Outcome.failed(f"The program could not be inspected: {why}.", expected=want,
                                      observed=str(why))
            found, observed = self._written(program)
            unseen = unwitnessed(probe_call(context), want) if found else None
            if unseen is not None:  # the runs of each collective written are counted from the compiled loops
                return unseen
            count = self._executed(found, context) if found else 0
            where = "your program performs"
        low = self.exactly if self.exactly is not None else self.at_least
        high = self.exactly if self.exactly is not None else self.at_most
        if count is None:
            if high is None:
                return Outcome.passed(f"{where[:1].upper()}{where[1:]} {observed}, in a loop ({want}).")
            return Outcome.failed(f"{where[:1].upper()}{where[1:]} {observed} inside a loop whose number of steps "
                                  f"depends on the data, so it runs an unbounded number of times; the task asks for "
                                  f"{want}. Give the loop a fixed number of steps (jax.lax.fori_loop with Python "
                                  "integers, jax.lax.scan) or move the collective out of it.", expected=want,
                                  observed=f"{observed}, run an unbounded number of times")
        if (low is not None and count < low) or (high is not None and count > high):
            extra = (" A collective inside a loop runs once per step; one in each of several programs, once in each."
                     if self.compiled and count > (high if high is not None else count) else "")
            return Outcome.failed(f"{where[:1].upper()}{where[1:]} {observed}; the task asks for {want}.{extra}",
                                  expected=want, observed=observed)
        return Outcome.passed(f"{where[:1].upper()}{where[1:]} {observed} ({want}).")

    def _run(self, returned: Any) -> tuple[int | None, str]:
        count: int | None = 0
        places = []
        for program in own_programs(returned, self.own_only):
            ours = [c.times for c in program.collectives if c.kind == self.operation]
            if None in ours:
                count = None
                places.append(f"in a loop of unknown length in {program.function}")
                continue
            runs = sum(ours) * program.runs  # type: ignore[arg-type]
            if runs:
                count = None if count is None else count + runs
                places.append(f"{runs} in {program.function}")
        shown = "an unbounded number of" if count is None else str(count)
        return count, f"{shown} {self.operation}" + (f" ({', '.join(places[:4])})" if places else "")

    def _executed(self, found: list[Node], context: Context) -> int | None:
        """A collective as written counts its runs: each of its kind that XLA runs in a loop
        adds a run per further iteration, and one in a loop of unknown length makes the count
        unbounded, as does one written in a ``while_loop`` of unknown length that XLA moved out
        of it (``written_in_unknown_loop``). Straight-line code counts its equations, whatever
        XLA adds around them."""
        returned, written = probe_call(context), len(found)
        if not returned.ok:
            return written
        ours = {id(node) for node in found}
        if any(id(node) in ours for node in written_in_unknown_loop(context, own_programs(returned, self.own_only))):
            return None
        kind = EXECUTED_AS.get(self.operation)
        if kind is None:
            return written
        extra = 0
        for program in own_programs(returned, self.own_only):
            for collective in program.collectives:
                if collective.kind != kind:
                    continue
                if collective.times is None:
                    return None
                extra += (collective.times - 1) * program.runs
        return written + extra

    def _written(self, program: Program) -> tuple[list[Node], str]:
        found = [n for n in program.nodes if n.primitive in names_of(self.operation) and not n.inlined]
        if self.operation in ("psum", "pmean"):
            sizes = axis_sizes(program)
            means = [n for n in found if mean_of(program, n, sizes)]
            found = means if self.operation == "pmean" else [n for n in found if n not in means]
        if self.axes is not None:
            found = [n for n in found if set(_axes(n)) == set(self.axes)]
        axes = sorted({repr(tuple(_axes(n))) for n in found})
        return found, f"{len(found)} {spelled(self.operation)}" + (f" (over {', '.join(axes)})" if axes else "")


@dataclass(frozen=True, kw_only=True)
class PlacedAtMostPerDevice(Check):
    """Every placement of the argument ``operand`` (itself, or a copy of its shape) by one of
    ``via`` (``jax.device_put`` unless told) puts at most ``fraction`` of its bytes on any one
    device, and there is at least one; and every array of ``operand``'s number of elements the
    probe call held between programs, however made, holds at most ``fraction`` of itself on any
    one device (a working copy on the one device the argument arrived on, as the argument
    itself is, excepted: it adds nothing to what the grader handed over)."""
    operand: str
    fraction: float
    via: tuple[str, ...] = ("device_put",)
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        leaves = dict(argument_leaves(probe))
        found = [] if isinstance(leaves.get(self.operand), np.ndarray) else [
            f"{self.id}: operand={self.operand!r} is no array leaf of the probe (leaves: {', '.join(leaves)})"]
        return found + [f"{self.id}: via={v!r} is no way of placing ({', '.join(VIA_NAME)})"
                        for v in self.via if v not in VIA_NAME]

    def judge(self, context: Context) -> Outcome:
        found = evidence(context)
        how = " or ".join(VIA_NAME[v] for v in self.via)
        want = (f"every placement of {self.operand} by {how}, and every array of its size held between programs, "
                f"holding at most {_share(self.fraction)} of it per device")
        if found.unobservable or found.problem:
            why = found.unobservable or found.problem or ""
            return Outcome.failed(f"Nothing to judge here: {why[:1].lower()}{why[1:]}.", expected=want, observed=why,
                                  hint_applies=False)
        value = dict(argument_leaves(context.probe))[self.operand]
        total = int(value.nbytes)
        ours = [p for p in found.placements if p.via in self.via and p.relation.get(self.operand) in ("exact", "copy")]
        if not ours:
            return Outcome.failed(f"Your function never placed {self.operand} (or a copy of it) with {how}.",
                                  expected=want, observed=f"no placement of {self.operand} by {how}")
        worst, worst_text = -1, ""
        for placement in ours:
            layout = blocks_of(placement.sharding, tuple(value.shape))
            if layout is None:  # the default device, or a sharding too vague to lay out: all of it, somewhere
                most = total
            else:
                most = max((int(np.prod([b - a for a, b in block])) * value.itemsize for block in layout.values()),
                           default=0)
            if most > worst:
                worst = most
                worst_text = sharding_text(placement.sharding, found.device_names)
        observed = (f"{_size(worst)} of the {_size(total)} of {self.operand} on one device "
                    f"({_share(worst / total if total else 0.0)} of it), placed on {worst_text}")
        if worst > self.fraction * total:
            return Outcome.failed(f"A placement of {self.operand} puts {observed}; the task allows at most "
                                  f"{_share(self.fraction)} of it per device.", expected=want, observed=observed)
        unseen = unwitnessed(probe_call(context), want)
        if unseen is not None:  # the arrays held between programs are known from the witness's rerun alone
            return unseen
        copies = [h for h in probe_call(context).held if h.size == value.size and not h.beside_arguments]
        over = max(copies, key=lambda h: h.most / (h.size * h.itemsize or 1), default=None)
        if over is not None and over.most > self.fraction * over.size * over.itemsize:
            held = (f"an array of {self.operand}'s size (shape {over.shape}) with {_size(over.most)} of its "
                    f"{_size(over.size * over.itemsize)} on one device "
                    f"({_share(over.most / (over.size * over.itemsize or 1))} of it), on {over.devices} "
                    f"device{'s' if over.devices > 1 else ''}")
            return Outcome.failed(
                f"Between its programs your function holds {held}: a copy of {self.operand} (or an array as large), "
                f"made without a placement of {self.operand} the task can see (jnp.array(..., device=), "
                f"jax.make_array_from_callback, a jitted program's output, ...). Every array alive on the devices "
                f"counts, however it was made: the task allows at most {_share(self.fraction)} of {self.operand} per "
                "device. Keep only the stored shards between programs; the whole weights exist only inside the "
                "program that uses them.", expected=want, observed=f"{held}, held between programs")
        placements = f"Each of the {len(ours)} placements" if len(ours) > 1 else "The placement"
        also = (f"; every other array of its size held between programs ({len(copies)}) at most that share too"
                if copies else "")
        return Outcome.passed(f"{placements} of {self.operand} holds at most {_share(self.fraction)} of it per "
                              f"device: the most, {observed}{also}.")
