"""``structure``: what the function really did with its arguments, not just what it returned.

Evidence comes from a real call on the probe arguments, recorded as a program in the child
(``grader.observe.recorder``): every placement it made (``jax.device_put``, the in/out
shardings of every ``jax.jit`` it called, sharding constraints, ``shard_map`` specs), with
exact dataflow, and the real device buffers of what it placed and returned. Code that cannot
be traced is judged exactly like code that can. Then cross-checks, each of which turns a
disagreement into a failure of every structure check:

- the observers were still in place when each call ended (nothing removed them);
- the buffers JAX really holds agree with the shardings the arrays report (a rewritten
  ``Mesh`` or spec cannot make data on eight devices look like data on one);
- the program ``jax.make_jaxpr`` traces, when it can, places the same things the same way
  (code that behaves differently when traced);
- every other call the value checks made placed the arguments, and returned its result, the
  same way as the probe call (code that behaves correctly only for the probe's shapes).

A :class:`NamedShardingTarget` names the value it is about by parameter or pytree path
(``operand="w"``, ``operand="params['dense']['kernel']"``, ``operand="result"``), so
messages name the student's own variables.
"""
from __future__ import annotations

import dataclasses
import hashlib
from abc import abstractmethod
from dataclasses import dataclass, field
from math import prod
from typing import Any, ClassVar

import numpy as np

from grader.arguments import Signature, argument_leaves, is_within
from grader.checks.base import Check, Context
from grader.checks.returns import probe_call
from grader.observe.program import Program
from grader.outcome import Category, Outcome

Spec = tuple[Any, ...]
Blocks = tuple[tuple[int, int], ...]  # [start, stop) per dimension


def spec_key(spec: Any) -> Spec:
    """A hashable form of a PartitionSpec as the child describes it (lists for tuples)."""
    return tuple(tuple(p) if isinstance(p, list) else p for p in spec)


def spec_text(spec: Spec) -> str:
    return f"PartitionSpec({', '.join(repr(p) for p in spec)})"


def trimmed(spec: Spec) -> Spec:
    """Trailing Nones say nothing: PartitionSpec('data') and PartitionSpec('data', None) lay a
    matrix out the same way, and JAX reports whichever the code wrote."""
    spec = tuple(spec)
    while spec and spec[-1] is None:
        spec = spec[:-1]
    return spec


def sharding_text(sharding: dict[str, Any], names: list[str]) -> str:
    kind = sharding.get("type")
    if kind == "NamedSharding":
        devices = ", ".join(names[i] if isinstance(i, int) and 0 <= i < len(names) else f"#{i}"
                            for i in sharding.get("mesh_devices") or [])
        return (f"NamedSharding(mesh over [{devices}] with axes {tuple(sharding.get('axis_names', []))}, "
                f"{spec_text(spec_key(sharding.get('spec', [])))})")
    if kind == "default":
        return "the default device"
    devices = ", ".join(names[i] if isinstance(i, int) and 0 <= i < len(names) else f"#{i}"
                        for i in sharding.get("devices", []))
    return f"{kind}({devices})"


def blocks_of(sharding: dict[str, Any], shape: tuple[int, ...]) -> dict[int, Blocks] | None:
    """Which block of an array of ``shape`` each device holds under ``sharding`` (a described
    NamedSharding, or a single device); None when the description says too little."""
    whole = tuple((0, n) for n in shape)
    if sharding.get("type") != "NamedSharding":
        devices = sharding.get("devices") or []
        return {int(devices[0]): whole} if len(devices) == 1 else None
    ids, mesh_shape = sharding.get("mesh_devices"), tuple(sharding.get("mesh_shape") or ())
    axes = tuple(sharding.get("axis_names") or ())
    if not ids or len(mesh_shape) != len(axes) or prod(mesh_shape) != len(ids):
        return None
    grid = np.array(ids).reshape(mesh_shape)
    sizes = dict(zip(axes, mesh_shape))
    spec = spec_key(sharding.get("spec") or ())
    spec = spec + (None,) * (len(shape) - len(spec))
    layout: dict[int, Blocks] = {}
    for coords in np.ndindex(*mesh_shape):
        where = dict(zip(axes, coords))
        blocks = []
        for n, entry in zip(shape, spec):
            names = () if entry is None else ((entry,) if isinstance(entry, str) else tuple(entry))
            if any(a not in sizes for a in names):
                return None
            count = prod(sizes[a] for a in names)
            index = int(np.ravel_multi_index([where[a] for a in names], [sizes[a] for a in names])) if names else 0
            size = n // count if count else n
            blocks.append((index * size, (index + 1) * size))
        layout[int(grid[coords])] = tuple(blocks)
    return layout


def digest(value: np.ndarray) -> str:
    """The digest the child sends for a buffer holding exactly ``value``."""
    return hashlib.sha1(np.ascontiguousarray(value).tobytes()).hexdigest()[:20]


# How each way of giving a value a sharding (grader.observe.program.VIAS) reads in a message.
VIA_TEXT = {
    "device_put": "jax.device_put({operand}, NamedSharding({mesh}, {spec}))",
    "jit_in": "jax.jit(f, in_shardings=NamedSharding({mesh}, {spec})) applied to {operand}",
    "jit_out": "jax.jit(f, out_shardings=NamedSharding({mesh}, {spec})) giving {operand}",
    "constraint": "jax.lax.with_sharding_constraint({operand}, NamedSharding({mesh}, {spec}))",
    "shard_map_in": "jax.shard_map(f, mesh={mesh}, in_specs={spec}, ...) applied to {operand}",
    "shard_map_out": "jax.shard_map(f, mesh={mesh}, out_specs={spec}, ...) giving {operand}",
}
VIA_NAME = {"device_put": "jax.device_put", "jit_in": "the in_shardings of jax.jit",
            "jit_out": "the out_shardings of jax.jit", "constraint": "jax.lax.with_sharding_constraint",
            "shard_map_in": "the in_specs of jax.shard_map", "shard_map_out": "the out_specs of jax.shard_map"}
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


@dataclass(frozen=True)
class Placement:
    """One value given a sharding during the probe call. ``relation`` maps each argument leaf
    (or result leaf) the placed value relates to onto how: exact, copy or derived."""
    sharding: dict[str, Any]
    via: str
    relation: dict[str, str]
    shape: tuple[int, ...] | None
    feeds_result: bool
    within: tuple[str, ...] = ()
    placed: int | None = None


@dataclass(frozen=True)
class Evidence:
    placements: tuple[Placement, ...]
    unobservable: str | None  # why nothing could be judged
    problem: str | None  # a cross-check that failed: every structure check fails with it
    how: str  # how the function was observed, for messages
    traced: bool
    device_names: list[str]
    program: Program | None = None
    probe_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    not_jax: str | None = None  # what the returned value is, when it is not made of JAX arrays


def placements_in(program: Program, shapes: dict[str, tuple[int, ...]]) -> list[Placement]:
    """Every placement of ``program``, with how it relates to the argument leaves (through the
    value it reads: ``exact`` the leaf itself, ``copy`` a value of the leaf's shape computed
    from it, ``derived`` any other value computed from it) and to the result leaves (through
    the value it gives: ``exact`` returned as it is, ``derived`` the result computed from it)."""
    reach = {path: program.derived_from([leaf]) for path, leaf in zip(program.input_paths, program.inputs)}
    found = []
    for p in program.all_placements():
        relation: dict[str, str] = {}
        for path, leaf in zip(program.input_paths, program.inputs):
            if p.source == leaf:
                relation[path] = "exact"
            elif p.source is not None and p.source in reach[path]:
                relation[path] = "copy" if program.shapes.get(p.source) == shapes.get(path) else "derived"
        given = program.derived_from([p.placed]) if p.placed is not None else set()
        for path, out in zip(program.output_paths, program.outputs):
            if out is not None and out in given:
                relation[path] = "exact" if out == p.placed else "derived"
        found.append(Placement(p.sharding, p.via, relation, program.shapes.get(p.placed) if p.placed is not None
                               else None, any(is_within(k, "result") for k in relation), p.within, p.placed))
    return found


def _canonical(sharding: dict[str, Any]) -> tuple[Any, ...]:
    if sharding.get("type") == "NamedSharding":
        return ("NamedSharding", tuple(sharding.get("mesh_devices") or ()), tuple(sharding.get("axis_names") or ()),
                trimmed(spec_key(sharding.get("spec") or ())))
    return (str(sharding.get("type")), tuple(sharding.get("devices") or ()))


def _seen(placements: list[Placement], names: list[str]) -> dict[tuple[Any, ...], str]:
    """What must be the same whether a function is traced or called: each placement of a value
    computed from the arguments onto a real sharding (keyed for comparing, with its words)."""
    seen = {}
    for p in placements:
        operands = sorted((k, v) for k, v in p.relation.items() if not is_within(k, "result"))
        if p.sharding.get("type") in ("default", None) or not operands:
            continue
        what = " and ".join(f"{k} itself" if v == "exact" else f"a value computed from {k}" for k, v in operands)
        seen[(p.via, tuple(operands), _canonical(p.sharding))] = \
            f"{what} by {VIA_NAME.get(p.via, p.via)} onto {sharding_text(p.sharding, names)}"
    return seen


def _buffers_problem(program: Program, probe: dict[str, Any], leaves: dict[str, Any],
                     names: list[str]) -> str | None:
    """Do the buffers JAX holds agree with the shardings the arrays report? Checked for every
    placement of an argument leaf itself and for every returned array, against the argument's
    or the result's own values."""
    arrays = program.arrays or {}
    checks: list[tuple[str, int, np.ndarray]] = []
    for placement in program.all_placements():
        if placement.via == "device_put" and placement.placed in arrays:
            for path, leaf in zip(program.input_paths, program.inputs):
                if placement.source == leaf and isinstance(probe.get(path), np.ndarray):
                    checks.append((f"the placed {path}", placement.placed, probe[path]))
    for path, out in zip(program.output_paths, program.outputs):
        if out in arrays and isinstance(leaves.get(path), np.ndarray):
            checks.append(("the returned array" if path == "result" else f"the returned {path}", out, leaves[path]))
    for what, value_id, value in checks:
        held = arrays[value_id]
        layout = blocks_of(held.sharding, tuple(value.shape))
        if layout is None:
            if held.sharding.get("type") in ("NamedSharding", "unreadable"):  # it cannot describe any layout
                where = ", ".join(names[d] if d < len(names) else f"#{d}" for d, _, _ in held.buffers)
                return (f"{_capital(what)} reports a sharding that describes no layout "
                        f"({sharding_text(held.sharding, names)}), while JAX holds its data on {where}. This "
                        "happens when a mesh or sharding is rewritten after it is made")
            continue
        got = {device: digest_ for device, _, digest_ in held.buffers}
        want = {device: digest(value[tuple(slice(a, b) for a, b in block)]) for device, block in layout.items()}
        if set(got) != set(want) or any(got[d] != want[d] for d in want):
            where = ", ".join(names[d] if d < len(names) else f"#{d}" for d in sorted(got))
            return (f"{_capital(what)} reports {sharding_text(held.sharding, names)}, but the data JAX holds on {where} is "
                    "not laid out as that sharding says (what the arrays really hold is what counts). This happens "
                    "when a shard_map's out_specs claim a layout its body does not produce (check_vma=False skips "
                    "JAX's own check of it), or when a mesh, sharding or array is rewritten after it is made")
    return None


def _calls_problem(context: Context, probe: Any, names: list[str]) -> str | None:
    """Did every other call place the arguments, and return its result, as the probe call did?
    Eager device_puts are seen on every call; a jitted function's shardings and a shard_map's
    specs on the first call of each shape (later ones take JAX's C++ fast path, unseen)."""
    def placed(returned: Any, vias: tuple[str, ...]) -> set[tuple[Any, ...]]:
        return {(p.get("via", "device_put"), p["operand"], _canonical(p["sharding"])) for p in returned.placements
                if p.get("via", "device_put") in vias and (p["operand"] or p.get("via") != "device_put")}

    def results(returned: Any) -> dict[str, tuple[Any, ...]]:
        return {leaf.path: _canonical(leaf.sharding) for leaf in returned.leaves if leaf.sharding}

    eager, transformed = ("device_put",), ("jit_in", "jit_out", "shard_map_in")
    want_eager, want_transformed, want_results = placed(probe, eager), placed(probe, transformed), results(probe)
    shapes_seen: set[tuple[Any, ...]] = set()
    for arguments, other in context.session.calls:
        leaves = argument_leaves(arguments)
        shapes = tuple(sorted((path, np.shape(leaf)) for path, leaf in leaves))  # drawn dicts vary in key order
        first_of_shape = shapes not in shapes_seen
        shapes_seen.add(shapes)
        if other is probe or not other.ok:
            continue
        if any(getattr(leaf, "size", 1) == 0 for _, leaf in leaves):
            continue  # JAX lays out what it computes from empty arrays as it likes (replicated, often)
        if not other.intact:
            return _TAMPERED
        returned = ", ".join(f"{leaf.path} of shape {leaf.shape}" for leaf in other.leaves[:3])
        if placed(other, eager) != want_eager or (first_of_shape and placed(other, transformed) != want_transformed):
            return (f"Your function placed its arguments differently on other inputs (a call returning {returned}) "
                    "than on the probe input; grading needs the same placements for every input the task allows")
        if results(other) != want_results:
            return (f"The arrays your function returned for other inputs (a call returning {returned}) live on a "
                    "different sharding than for the probe input; grading needs the same behaviour for every input "
                    "the task allows")
    return None


_TAMPERED = ("The grader's observers of JAX were removed or replaced while your function ran, so what it did cannot "
             "be seen. Do not patch JAX (or the grader) in your solution")


def gather(context: Context) -> Evidence:
    returned = probe_call(context)
    names = list(context.session.environment.get("devices", []))
    shapes = {path: tuple(np.shape(value)) for path, value in _probe_leaves(context.probe).items()}
    if not returned.ok or returned.program is None:
        why = f"your function {returned.describe()}" if not returned.ok else "the call was not recorded"
        return Evidence((), why, None, "", False, names, probe_shapes=shapes)
    program = returned.program
    placements = placements_in(program, shapes)
    traced = context.memo("trace", lambda: context.session.trace(context.probe))
    problem = None
    if not returned.intact:
        problem = _TAMPERED
    if problem is None:
        problem = _unseen_result(program, returned)
    if problem is None:
        problem = _buffers_problem(program, _probe_leaves(context.probe),
                                   {leaf.path: leaf.array for leaf in returned.leaves}, names)
    if problem is None and traced.program is not None:
        in_trace, in_call = _seen(placements_in(traced.program, shapes), names), _seen(placements, names)
        if set(in_trace) != set(in_call):
            only = lambda mine, other: "; ".join(mine[k] for k in mine if k not in other) or "nothing"  # noqa: E731
            problem = ("Your function places values differently when traced (jax.make_jaxpr) than when really "
                       f"called: only when traced, it placed {only(in_trace, in_call)}; only when called, it placed "
                       f"{only(in_call, in_trace)}")
    if problem is None:
        problem = _calls_problem(context, returned, names)
    how = ("seen in the real call, and the same in the traced program" if traced.program is not None else
           f"seen in the real call; jax.make_jaxpr could not trace your function ({_first_line(traced.error)}), "
           "which is fine: it was judged from what the call really did")
    not_jax = next((leaf.describe() for leaf in returned.leaves if leaf.kind != "jax_array"), None)
    return Evidence(tuple(placements), None, problem, how, traced.program is not None, names, program, shapes,
                    not_jax)


def _unseen_result(program: Program, returned: Any) -> str | None:
    """A returned JAX array that no operation the grader saw produced (and that is no argument)."""
    kinds = {leaf.path: leaf.kind for leaf in returned.leaves}
    made = {o for node in program.nodes for o in node.outputs} | set(program.inputs)
    for path, out in zip(program.output_paths, program.outputs):
        if kinds.get(path) == "jax_array" and out not in made:
            what = "The array your function returned" if path == "result" else f"The array your function returned at {path}"
            return (f"{what} was not computed by any JAX operation the grader saw during the call: it was made "
                    "before the call (at import), or the grader's observers of JAX were removed while your code "
                    "ran. Compute the result inside the function, and do not patch JAX")
    return None


def _probe_leaves(probe: dict[str, Any]) -> dict[str, Any]:
    return dict(argument_leaves(probe))


def _first_line(text: str | None) -> str:
    line = (text or "unknown reason").strip().splitlines()[0] if (text or "").strip() else "unknown reason"
    return line[:200]


def evidence(context: Context) -> Evidence:
    return context.memo("structure", lambda: gather(context))


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

    @staticmethod
    def _once(context: Context, reason: object, full: Outcome) -> Outcome:
        """The first structure check to fail for ``reason`` explains it in full; the others
        (which would have judged details of the same missing evidence) say so in one line."""
        explained = context.session.cache.setdefault("structure explained", [])
        if reason not in explained:
            explained.append(reason)
            return full
        why = (full.observed or "").rstrip(".")
        return dataclasses.replace(full, message=f"There is nothing to judge here: {why[:1].lower()}{why[1:]}.")

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


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True, kw_only=True)
class PlacedOnNamedSharding(StructureCheck):
    """The value the target names is given a NamedSharding the way the target says."""

    def judge_placement(self, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        where = sharding_text(chosen.sharding, found.device_names)
        label = _named(leaf, self.target)
        if chosen.sharding.get("type") == "NamedSharding":
            return Outcome.passed(f"{_capital(label)} is placed with {VIA_NAME[chosen.via]} on {where} "
                                  f"({found.how.split(';')[0]}).")
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
        if got == self.target.spec:
            return Outcome.passed(f"{_capital(label)} is placed with {spec_text(got)}.")
        if got in self.target.also_accept:
            return Outcome.passed(f"{_capital(label)} is placed with {spec_text(got)}.",
                                  advisory=self.target.also_accept[got])
        split = [p for p in got if p is not None]
        effect = f": it splits {label} along {', '.join(map(repr, split))}" if split else ": it splits nothing"
        return Outcome.failed(f"{_capital(label)} is placed with {spec_text(got)}{effect}; the task asks for "
                              f"{spec_text(self.target.spec)}.", expected=spec_text(self.target.spec),
                              observed=spec_text(got))


@dataclass(frozen=True, kw_only=True)
class ResultFromPlacement(StructureCheck):
    """The returned value (the leaves under ``result``) is computed from the placed value, not
    from the original argument, and not placed afterwards."""
    result: str = "result"

    def judge_placement(self, chosen: Placement, found: Evidence, leaf: str) -> Outcome:
        label = _named(leaf, self.target)
        what = "the result" if self.result == "result" else self.result
        if chosen.placed is not None and found.program is not None and found.program.feeds(chosen.placed, self.result):
            return Outcome.passed(f"{_capital(what)} is computed from the placed {label}.")
        if found.not_jax:
            observed = (f"{what} is {found.not_jax}, not a JAX array: a value that leaves JAX (NumPy, float()) "
                        f"carries no link to the placed {label}")
            return Outcome.failed(f"{_capital(observed)}. Return the JAX array computed from the placed {label}.",
                                  expected=f"{what} computed from the placed {label}", observed=observed)
        observed = (f"{what} is not computed from what {VIA_NAME[chosen.via]} returned for {label}; that placed "
                    "copy is never used")
        return Outcome.failed(f"{observed[0].upper()}{observed[1:]}. Compute {what} from the placed {label} "
                              f"({VIA_NAME[chosen.via]} gives it), and place before computing, not after.",
                              expected=f"{what} computed from the placed {label}", observed=observed)
