"""``structure``: what the function really did with its arguments, not just what it returned.

A :class:`NamedShardingTarget` says what a task asks for: which value (by parameter or pytree
path: ``operand="w"``, ``operand="params['dense']['kernel']"``, ``operand="result"``), given
which sharding, which way. The checks here judge, for every leaf of that operand, the
placement the evidence (``grader.checks.evidence``) singles out: that it is a NamedSharding,
its mesh, its spec, and that the result is computed from it. Messages name the student's own
variables.
"""
from __future__ import annotations

import dataclasses
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from grader.arguments import Signature, argument_leaves, flatten, is_within, short, with_leaf
from grader.checks.base import Check, Context
from grader.checks.evidence import VIA_NAME, Evidence, Placement, evidence, host_text, host_work, placements_in
from grader.checks.shardings import Spec, capital, sharding_text, spec_key, spec_text
from grader.checks.returns import probe_call
from grader.checks.values import answer_on, arguments_text, format_number, observed
from grader.observe.returned import HostWork, Returned
from grader.observe.session import Counterfactual
from grader.outcome import Category, Outcome

# How each way of giving a value a sharding (grader.observe.program.VIAS) reads in a message.
VIA_TEXT = {
    "device_put": "jax.device_put({operand}, NamedSharding({mesh}, {spec}))",
    "jit_in": "jax.jit(f, in_shardings=NamedSharding({mesh}, {spec})) applied to {operand}",
    "jit_out": "jax.jit(f, out_shardings=NamedSharding({mesh}, {spec})) giving {operand}",
    "constraint": "jax.lax.with_sharding_constraint({operand}, NamedSharding({mesh}, {spec}))",
    "shard_map_in": "jax.shard_map(f, mesh={mesh}, in_specs={spec}, ...) applied to {operand}",
    "shard_map_out": "jax.shard_map(f, mesh={mesh}, out_specs={spec}, ...) giving {operand}",
}
# How the placed value must relate to the operand, by ``NamedShardingTarget.match``.
MATCHES = {"exact": ("exact",), "copy": ("exact", "copy"), "derived": ("copy", "derived")}
MATCH_TEXT = {"exact": "{label} itself", "copy": "{label} (or a value of its shape computed from it)",
              "derived": "a value computed from {label}"}


@dataclass(frozen=True, kw_only=True)
class NamedShardingTarget:
    """The placement a task asks for. ``devices`` is a (start, stop) slice of jax.devices();
    ``also_accept`` maps other specs that lay the data out the same way to an advisory note.

    ``via`` says how the sharding is given (a key of ``VIA_TEXT``). ``operand`` names the value
    it is about: a parameter (``"x"``), a leaf or subtree of one (``"params['dense']"``: every
    leaf under it must be placed so), or the returned value (``"result"``, ``"result['w']"``).
    ``match`` says how the placed value relates to it: ``"exact"`` the argument itself (so
    computing first and placing the result does not count), ``"copy"`` the argument or an
    unchanged same-shaped copy, ``"derived"`` a value computed from it (not itself: an
    intermediate to constrain, a placed copy to move again). ``shaped_like`` names a
    parameter whose shape the placed value must have (the squares of x, not their sums).
    ``inside`` names a transformation the placement must happen in (``"jit"``: a sharding
    constraint only means something under jit). ``label`` names the value in messages."""
    axis_names: tuple[str, ...]
    spec: Spec = ()
    devices: tuple[int | None, int | None] = (None, None)
    mesh_shape: tuple[int, ...] | None = None
    also_accept: dict[Spec, str] = field(default_factory=dict)
    via: str = "device_put"
    operand: str = "x"
    match: str = "copy"
    shaped_like: str | None = None
    inside: str | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        if self.via not in VIA_TEXT or self.match not in MATCHES:
            raise ValueError(f"NamedShardingTarget: via must be one of {sorted(VIA_TEXT)} and match one of "
                             f"{sorted(MATCHES)}; got via={self.via!r}, match={self.match!r}")
        if self.label is None:
            object.__setattr__(self, "label", "the result" if self.on_result else self.operand)

    @property
    def on_result(self) -> bool:
        return is_within(self.operand, "result")

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        """What an author got wrong: an operand or ``shaped_like`` that names nothing."""
        leaves = list(signature.leaf_specs())
        found = []
        for name in (self.operand, self.shaped_like):
            if name is not None and not is_within(name, "result") and not any(is_within(p, name) for p in leaves):
                found.append(f"operand {name!r} names no parameter or leaf of one; the parameters' leaves are "
                             f"{', '.join(leaves)}")
        return found

    def device_ids(self, available: int) -> list[int]:
        return list(range(available))[slice(*self.devices)]

    def devices_text(self) -> str:
        start, stop = ("" if v is None else str(v) for v in self.devices)
        return "jax.devices()" if self.devices == (None, None) else f"jax.devices()[{start}:{stop}]"

    def mesh_text(self) -> str:
        devices = f"np.array({self.devices_text()})"
        if self.mesh_shape is not None and len(self.mesh_shape) > 1:
            devices += f".reshape{self.mesh_shape}"
        return f"Mesh({devices}, {self.axis_names!r})"

    def text(self) -> str:
        text = VIA_TEXT[self.via].format(operand=self.label, mesh=self.mesh_text(), spec=spec_text(self.spec))
        return f"{text} inside jax.{self.inside}" if self.inside else text

    def as_sharding(self, available: int) -> dict[str, Any]:
        """The target as the child would describe the sharding it asks for."""
        ids = self.device_ids(available)
        return {"type": "NamedSharding", "mesh_devices": ids, "mesh_shape": list(self.mesh_shape or (len(ids),)),
                "axis_names": list(self.axis_names), "spec": [list(p) if isinstance(p, tuple) else p
                                                              for p in self.spec]}


@dataclass(frozen=True, kw_only=True)
class StructureCheck(Check):
    """Shared by the placement checks: each judges, for every leaf of the target's operand,
    the placement the evidence singles out for it."""
    target: NamedShardingTarget
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        return [f"{self.id}: {p}" for p in self.target.problems(signature, probe)]

    def judge(self, context: Context) -> Outcome:
        found = evidence(context)
        if found.unobservable:
            full = Outcome.failed(f"What your function does could not be observed: {found.unobservable}.",
                                  expected=self.target.text(), observed=found.unobservable, hint_applies=False)
            return self._once(context, "unobservable", full)
        if found.problem:
            full = Outcome.failed(found.problem + ".", expected="what the arrays JAX holds show, the same on every "
                                  "call and whether traced or not", observed=found.problem)
            return self._once(context, "problem", full)
        outcomes = []
        for leaf in self.leaves(found):
            chosen = self.chosen(found, leaf)
            outcome = (self._once(context, ("absent", self.target, leaf), self.nothing_placed(found, leaf))
                       if chosen is None else self.judge_placement(chosen, found, leaf))
            outcomes.append((leaf, outcome))
        failed = [(leaf, o) for leaf, o in outcomes if o.status != "passed"]
        if failed:
            leaf, outcome = failed[0]
            more = f" ({len(failed) - 1} more leaves of {self.target.label} fail too.)" if len(failed) > 1 else ""
            return dataclasses.replace(outcome, message=outcome.message + more)
        passed = outcomes[0][1]
        advisory = passed.advisory or (None if found.traced else self._once_note(context, found.how))
        if len(outcomes) > 1:
            return Outcome.passed(f"Every leaf of {self.target.label} passes: " +
                                  " ".join(o.message for _, o in outcomes), advisory=advisory)
        return dataclasses.replace(passed, advisory=advisory)

    def leaves(self, found: Evidence) -> list[str]:
        """The leaves the target is about (several when it names a subtree such as ``params``)."""
        if self.target.on_result:
            outputs = found.program.output_paths if found.program is not None else ()
            return [p for p in outputs if is_within(p, self.target.operand)] or [self.target.operand]
        leaves = [p for p in found.probe_shapes if is_within(p, self.target.operand)]
        return leaves or [self.target.operand]

    def counts(self, placement: Placement, leaf: str, found: Evidence, anywhere: bool = False) -> bool:
        """Is ``placement`` one this target judges for ``leaf`` (the right way, of the right value,
        inside what the target asks for unless ``anywhere``)?"""
        target = self.target
        # A result relates to a placement "exact"ly (returned as placed) or "derived" (computed from it).
        allowed = (("exact",) if target.match == "exact" else ("exact", "derived")) if target.on_result \
            else MATCHES[target.match]
        if placement.via != target.via or placement.relation.get(leaf) not in allowed:
            return False
        if target.shaped_like is not None and placement.shape != found.probe_shapes.get(target.shaped_like):
            return False
        return anywhere or target.inside is None or target.inside in placement.within

    def chosen(self, found: Evidence, leaf: str) -> Placement | None:
        """The placement to judge for ``leaf``: one the result is computed from if any, and
        among those the one closest to the target."""
        ours = [p for p in found.placements if self.counts(p, leaf, found)]
        count = len(found.device_names)
        ranked = sorted(ours, key=lambda p: (not p.feeds_result, -_closeness(p.sharding, self.target, count)))
        return ranked[0] if ranked else None

    def _once(self, context: Context, reason: object, full: Outcome) -> Outcome:
        """The first structure check to fail for ``reason`` explains it in full; the others
        (which would have judged details of the same missing evidence) point to it in one line.
        Reasons are compared by equality (a target holds a dict: not hashable)."""
        explained = context.session.cache.setdefault("structure explained", [])
        first = next((title for known, title in explained if known == reason), None)
        if first is None:
            explained.append((reason, self.title))
            return full
        why = (full.observed or "").rstrip(".")
        return dataclasses.replace(full, message=f"Nothing to judge here: {why[:1].lower()}{why[1:]} "
                                                 f"(see “{first}”).")

    @staticmethod
    def _once_note(context: Context, note: str) -> str | None:
        """How the function was observed, said once per report (on the first structure check)."""
        if context.session.cache.get("structure noted"):
            return None
        context.session.cache["structure noted"] = True
        return note[:1].upper() + note[1:] + "."

    def nothing_placed(self, found: Evidence, leaf: str) -> Outcome:
        target = self.target
        name, want = VIA_NAME[target.via], target.text()
        label = leaf if leaf != target.operand or not target.on_result else target.label
        # What the target is about, in the exercise's words ("the squares") where it has some.
        wanted = target.label if target.label != target.operand else MATCH_TEXT[target.match].format(label=label)
        same_way = [p for p in found.placements if p.via == target.via]
        related = [p for p in same_way if leaf in p.relation]
        if target.inside and any(self.counts(p, leaf, found, anywhere=True) for p in related):
            observed = f"your function used {name} only outside jax.{target.inside}"
            advice = f"Use it inside the function you pass to jax.{target.inside}: {want}."
        elif related:
            kinds = {p.relation[leaf] for p in related}
            wrong_shape = target.shaped_like is not None and any(
                p.shape != found.probe_shapes.get(target.shaped_like) for p in related)
            what = {"exact": f"{label} itself", "copy": f"a value of {label}'s shape computed from it",
                    "derived": f"a value computed from {label}"}
            observed = (f"your function applied {name} to {' and '.join(what[k] for k in sorted(kinds))}"
                        + (f" of another shape than {target.shaped_like}" if wrong_shape else "")
                        + f", not to {wanted}")
            advice = (f"Place {label} itself first, then compute on the placed array." if target.match == "exact"
                      else f"Use {want}.")
        elif same_way:
            observed = f"your function used {name}, but not on {wanted}"
            advice = f"Use {want}."
        elif target.via == "device_put":
            observed = f"no jax.device_put of {label} happened"
            advice = f"Place {label} with {want} before computing."
        else:
            observed = f"your function never used {name}"
            advice = f"Use {want}."
        return Outcome.failed(f"{observed[0].upper()}{observed[1:]}. {advice}", expected=want, observed=observed)

    @abstractmethod
    def judge_placement(self, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        """Judge the placement of ``leaf`` that the evidence singles out."""


def _closeness(sharding: dict[str, Any], target: NamedShardingTarget, available: int) -> int:
    """How many of the target's properties a sharding has (used only to rank candidates)."""
    if sharding.get("type") != "NamedSharding":
        return 0
    return sum((tuple(sharding.get("axis_names", [])) == target.axis_names,
                spec_key(sharding.get("spec", [])) == target.spec,
                target.mesh_shape is None or tuple(sharding.get("mesh_shape", [])) == target.mesh_shape,
                sorted(sharding.get("mesh_devices") or []) == target.device_ids(available)))


def _named(leaf: str, target: NamedShardingTarget) -> str:
    return target.label if leaf == target.operand else leaf


def _opening(text: str, *names: str) -> str:
    """``text`` opening a sentence: prose ("the result ...") is capitalised; a sentence that
    starts with one of the student's own ``names`` (x, params['w']) keeps it as they wrote it."""
    return text if any(text == name or text.startswith(name + " ") for name in names) else capital(text)


@dataclass(frozen=True, kw_only=True)
class PlacedOnNamedSharding(StructureCheck):
    """The value the target names is given a NamedSharding the way the target says."""

    def judge_placement(self, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        where = sharding_text(chosen.sharding, found.device_names)
        label = _named(leaf, self.target)
        if chosen.sharding.get("type") == "NamedSharding":
            return Outcome.passed(f"{_opening(label, leaf, self.target.operand)} is placed with "
                                  f"{VIA_NAME[chosen.via]} on {where} ({found.how.split(';')[0]}).")
        return Outcome.failed(f"You placed {label} on {where}, which is not a NamedSharding over a mesh. "
                              f"Use {self.target.text()}.", expected=self.target.text(), observed=where)


@dataclass(frozen=True, kw_only=True)
class MeshMatches(PlacedOnNamedSharding):
    """The mesh holds exactly the asked-for devices, with the asked-for shape and axis names."""

    def judge_placement(self, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        if chosen.sharding.get("type") != "NamedSharding":
            return super().judge_placement(chosen, found, leaf)
        names = found.device_names
        want = self.target.device_ids(len(names))
        got = list(chosen.sharding.get("mesh_devices") or [])
        axes = tuple(chosen.sharding.get("axis_names", []))
        shape = tuple(chosen.sharding.get("mesh_shape", []))
        problems = []
        if sorted(got) != sorted(want):
            problems.append(f"your mesh holds {_count(got, names)}; the task asks for "
                            f"{self.target.devices_text()} ({_count(want, names)})")
        if self.target.mesh_shape is not None and shape != self.target.mesh_shape:
            problems.append(f"your mesh has shape {shape}; the task asks for {self.target.mesh_shape}")
        if axes != self.target.axis_names:
            problems.append(f"your mesh's axis names are {axes}; the task asks for {self.target.axis_names}")
        if problems:
            text = "; ".join(problems)
            return Outcome.failed(text[0].upper() + text[1:] + ".",
                                  expected=self.target.mesh_text(),
                                  observed=f"a mesh over {_count(got, names)} with axes {axes}")
        return Outcome.passed(f"The mesh {self.target.label} is placed on holds {_count(got, names)} with axis "
                              f"names {axes}.")


def _count(ids: list[int], names: list[str]) -> str:
    labels = [names[i] if isinstance(i, int) and 0 <= i < len(names) else f"#{i}" for i in ids]
    if len(labels) > 4:
        labels = [labels[0], "…", labels[-1]]
    noun = "device" if len(ids) == 1 else "devices"
    return f"{len(ids)} {noun}: {' '.join(labels)}" if len(ids) > 1 else f"1 {noun}: {labels[0] if labels else '?'}"


@dataclass(frozen=True, kw_only=True)
class SpecMatches(PlacedOnNamedSharding):
    """The PartitionSpec is the asked-for one (or one the target accepts with a note)."""

    def judge_placement(self, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        if chosen.sharding.get("type") != "NamedSharding":
            return super().judge_placement(chosen, found, leaf)
        got, label = spec_key(chosen.sharding.get("spec", [])), _named(leaf, self.target)
        subject = _opening(label, leaf, self.target.operand)
        if got == self.target.spec:
            return Outcome.passed(f"{subject} is placed with {spec_text(got)}.")
        if got in self.target.also_accept:
            return Outcome.passed(f"{subject} is placed with {spec_text(got)}.",
                                  advisory=self.target.also_accept[got])
        split = [p for p in got if p is not None]
        effect = f": it splits {label} along {', '.join(map(repr, split))}" if split else ": it splits nothing"
        return Outcome.failed(f"{subject} is placed with {spec_text(got)}{effect}; the task asks for "
                              f"{spec_text(self.target.spec)}.", expected=spec_text(self.target.spec),
                              observed=spec_text(got))


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
    the host (callbacks, custom derivative rules of the student's own, values pulled to NumPy
    and given back) is refused unless ``allow_host``."""
    result: str = "result"
    allow_host: bool = False

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
        label = _named(leaf, self.target)
        via = VIA_NAME[chosen.via] if chosen is not None else VIA_NAME[self.target.via]
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
            opening = f"{what} does not follow the placed {label}"
            return Outcome.failed(
                f"{where}{opening if where else _opening(opening, self.result)}: with {label} unchanged but {via} "
                f"handed what your function places for {label} = {short(other)}, {difference}, the latter being "
                f"its answer on that {label}. So {what} is "
                f"not computed from the placed {label}: it is recomputed from the original {label} (on the host "
                f"or in a separate JAX computation), or reaches the placed {label} only through a link that "
                f"carries nothing (such as 0 * the placed array). Compute {what} from what {via} returns.",
                expected=f"{what} computed from the placed {label}: {observed(direct)}",
                observed=observed(fed), counterexample=f"{label} = {short(other, 64)}")
        return None

    def judge_placement(self, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        label = _named(leaf, self.target)
        what = "the result" if self.result == "result" else self.result
        if chosen.placed is not None and found.program is not None and found.program.feeds(chosen.placed, self.result):
            return Outcome.passed(f"{_opening(what, self.result)} is computed from the placed {label}.")
        if found.not_jax:
            observed = (f"{what} is {found.not_jax}, not a JAX array: a value that leaves JAX (NumPy, float()) "
                        f"carries no link to the placed {label}")
            return Outcome.failed(f"{_opening(observed, self.result)}. Return the JAX array computed from the "
                                  f"placed {label}.",
                                  expected=f"{what} computed from the placed {label}", observed=observed)
        observed = (f"{what} is not computed from what {VIA_NAME[chosen.via]} returned for {label}; that placed "
                    "copy is never used")
        return Outcome.failed(f"{_opening(observed, self.result)}. Compute {what} from the placed {label} "
                              f"({VIA_NAME[chosen.via]} gives it), and place before computing, not after.",
                              expected=f"{what} computed from the placed {label}", observed=observed)


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
        f"{where}{_opening(f'{what} does not follow {source}', result) if not where else ''}"
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
