"""``structure``: what the function really did with its arguments, not just what it returned.

A :class:`NamedShardingTarget` says what a task asks for: which value (by parameter or pytree
path: ``operand="w"``, ``operand="params['dense']['kernel']"``, ``operand="result"``), given
which sharding, which way. The checks here judge, for every leaf of that operand, the
placement the evidence (``grader.checks.evidence``) singles out: that it is a NamedSharding,
its mesh, its spec (and, in ``grader.checks.from_placement``, that the result is computed from
it). Messages name the student's own variables.
"""
from __future__ import annotations

import dataclasses
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from grader.arguments import Signature, is_within
from grader.checks.base import Check, Context
from grader.checks.evidence import VIA_NAME, Evidence, Placement, evidence, placed_by
from grader.checks.shardings import Spec, capital, sharding_text, spec_key, spec_text
from grader.observe.layouts import layout_of
from grader.observe.program import Program
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
    # Whether a failure is a difference of layout, drawn beside the words (with_layouts): not for
    # a check judging what the placed value became, or a property no picture of blocks shows.
    draws_layouts: ClassVar[bool] = True

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
        absent = missing_leaf(found.program, self.target.operand) if self.target.on_result else None
        if absent is not None:
            return Outcome.failed(f"{opening(absent, self.target.operand)}, so its placement cannot be judged. Return "
                                  f"{self.target.operand} as the task declares it.", expected=self.target.text(),
                                  observed=absent)
        outcomes = []
        for leaf in self.leaves(found):
            chosen = self.chosen(found, leaf)
            outcome = (self._once(context, ("absent", self.target, leaf), self.nothing_placed(found, leaf))
                       if chosen is None else self.with_layouts(self.judge_placement(chosen, found, leaf), chosen,
                                                                found, leaf))
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

    def with_layouts(self, outcome: Outcome, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        """A failed ``outcome`` with the two layouts it compared, to draw: the target's and the
        chosen placement's, of the placed value's shape. The placement is one the witness
        confirmed (a divergence fails every structure check instead) and whose buffers agree
        with its sharding (``Evidence.problem`` otherwise), so its blocks are where the data is."""
        shape = chosen.shape if chosen.shape is not None else found.probe_shapes.get(leaf)
        if outcome.status != "failed" or shape is None or not self.draws_layouts:
            return outcome
        names = found.device_names
        asked = self.target.as_sharding(len(names))
        return dataclasses.replace(outcome, expected_layout=layout_of(asked, shape, names),
                                   observed_layout=layout_of(chosen.sharding, shape, names))

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
        outside = [p for p in related if self.counts(p, leaf, found, anywhere=True)]
        if target.inside and outside:
            used = " and ".join(dict.fromkeys(placed_by(p) for p in outside))
            observed = f"your function used {used} only outside jax.{target.inside}"
            advice = (f"Use it inside the function you pass to jax.{target.inside}: {want}." if used == name else
                      f"Call {used} inside the function you pass to jax.{target.inside} instead, or {want}.")
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
        seen = _placements_text(found.placements, found.device_names)
        return Outcome.failed(f"{observed[0].upper()}{observed[1:]}. {advice}", expected=want,
                              observed=f"{observed} (what it placed: {seen})")

    @abstractmethod
    def judge_placement(self, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        """Judge the placement of ``leaf`` that the evidence singles out."""


def missing_leaf(program: Program | None, path: str) -> str | None:
    """Why ``path`` (a returned leaf or subtree: ``result['w']``) names nothing the function
    returned, in words; None when it names something (or when nothing was recorded)."""
    if program is None or any(is_within(p, path) for p in program.output_paths):
        return None
    shown = ", ".join(program.output_paths[:6]) + (" …" if len(program.output_paths) > 6 else "")
    return f"{path} is missing: your function returned {f'the leaves {shown}' if shown else 'no array'}"


def _placements_text(placements: tuple[Placement, ...], names: list[str], shown: int = 3) -> str:
    """What the probe call placed, and how, for an observed line: "x itself by jax.device_put
    onto NamedSharding(...); ..." (the values a target could have judged)."""
    told = []
    for p in placements:
        if p.sharding.get("type") in ("default", None):
            continue
        related = sorted((k, v) for k, v in p.relation.items() if not is_within(k, "result"))
        kinds = {"exact": "{} itself", "copy": "a value of {}'s shape computed from it",
                 "derived": "a value computed from {}"}
        what = " and ".join(kinds.get(v, kinds["derived"]).format(k) for k, v in related)
        told.append(f"{what or 'a value not computed from the arguments'} by {placed_by(p)} onto "
                    f"{sharding_text(p.sharding, names)}")
    if not told:
        return "nothing, on any sharding"
    return "; ".join(told[:shown]) + (f"; and {len(told) - shown} more" if len(told) > shown else "")


def _closeness(sharding: dict[str, Any], target: NamedShardingTarget, available: int) -> int:
    """How many of the target's properties a sharding has (used only to rank candidates)."""
    if sharding.get("type") != "NamedSharding":
        return 0
    return sum((tuple(sharding.get("axis_names", [])) == target.axis_names,
                spec_key(sharding.get("spec", [])) == target.spec,
                target.mesh_shape is None or tuple(sharding.get("mesh_shape", [])) == target.mesh_shape,
                sorted(sharding.get("mesh_devices") or []) == target.device_ids(available)))


def named(leaf: str, target: NamedShardingTarget) -> str:
    return target.label if leaf == target.operand else leaf


def opening(text: str, *names: str) -> str:
    """``text`` opening a sentence: prose ("the result ...") is capitalised; a sentence that
    starts with one of the student's own ``names`` (x, params['w']) keeps it as they wrote it."""
    return text if any(text == name or text.startswith(name + " ") for name in names) else capital(text)


@dataclass(frozen=True, kw_only=True)
class PlacedOnNamedSharding(StructureCheck):
    """The value the target names is given a NamedSharding the way the target says."""

    def judge_placement(self, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        where = sharding_text(chosen.sharding, found.device_names)
        label = named(leaf, self.target)
        if chosen.sharding.get("type") == "NamedSharding":
            return Outcome.passed(f"{opening(label, leaf, self.target.operand)} is placed with "
                                  f"{placed_by(chosen)} on {where} ({found.how.split(';')[0]}).")
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
        if chosen.sharding.get("mesh_devices") is None:  # an abstract mesh JAX ran on no mesh the grader saw
            problems.append(f"your mesh names no devices (an abstract mesh: axes and sizes only, and no "
                            f"jax.set_mesh(mesh) in force where it ran); the task asks for "
                            f"{self.target.devices_text()} ({_count(want, names)}): pass the concrete mesh "
                            f"(mesh=...), or run it inside `with jax.set_mesh(mesh):`")
        elif sorted(got) != sorted(want):
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
                                  observed=f"a mesh of shape {shape} over {_count(got, names)} with axes {axes}"
                                  if chosen.sharding.get("mesh_devices") is not None
                                  else f"an abstract mesh of shape {shape} with axes {axes}, naming no devices")
        return Outcome.passed(f"The mesh {self.target.label} is placed on holds {_count(got, names)} with axis "
                              f"names {axes}.")


def _count(ids: list[int], names: list[str]) -> str:
    labels = [names[i] if isinstance(i, int) and 0 <= i < len(names) else f"#{i}" for i in ids]
    if len(labels) > 4:
        labels = [labels[0], "…", labels[-1]]
    if not labels:
        return "no devices"
    return f"{len(ids)} devices: {' '.join(labels)}" if len(ids) > 1 else f"1 device: {labels[0]}"


@dataclass(frozen=True, kw_only=True)
class SpecMatches(PlacedOnNamedSharding):
    """The PartitionSpec is the asked-for one (or one the target accepts with a note)."""

    def judge_placement(self, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        if chosen.sharding.get("type") != "NamedSharding":
            return super().judge_placement(chosen, found, leaf)
        got, label = spec_key(chosen.sharding.get("spec", [])), named(leaf, self.target)
        subject = opening(label, leaf, self.target.operand)
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
