"""The evidence structure is judged on: what a real call on the probe arguments did, and the
cross-checks that make it trustworthy.

The probe call is recorded as a program in the child (``grader.child.recorder``): every
placement it made (``jax.device_put``, the in/out shardings of every ``jax.jit`` it called,
sharding constraints, ``shard_map`` specs), with exact dataflow, and the real device buffers
of what it placed and returned. Code that cannot be traced is judged exactly like code that
can. Then cross-checks, each of which turns a disagreement into a failure of every structure
check (``Evidence.problem``):

- the observers were still in place when each call ended (nothing removed them), and every
  returned array was made by an operation the grader saw;
- the buffers JAX really holds agree with the shardings the arrays report (a rewritten
  ``Mesh`` or spec cannot make data on eight devices look like data on one);
- the program ``jax.make_jaxpr`` traces, when it can, places the same things the same way
  (code that behaves differently when traced);
- every other call the value checks made placed the arguments, and returned its result, the
  same way as the probe call (code that behaves correctly only for the probe's shapes).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from grader.arguments import argument_leaves, is_within
from grader.checks.base import Context
from grader.checks.returns import probe_call
from grader.checks.shardings import blocks_of, canonical, capital, digest, sharding_text
from grader.observe.program import Program
from grader.observe.returned import HostWork

# How each way of giving a value a sharding (grader.observe.program.VIAS) is named in messages.
VIA_NAME = {"device_put": "jax.device_put", "jit_in": "the in_shardings of jax.jit",
            "jit_out": "the out_shardings of jax.jit", "constraint": "jax.lax.with_sharding_constraint",
            "shard_map_in": "the in_specs of jax.shard_map", "shard_map_out": "the out_specs of jax.shard_map"}
# How a student writes the placing operations (a via can have several: a constraint is
# with_sharding_constraint or reshard; the collectives' spellings are program_checks').
WRITTEN = {"sharding_constraint": "jax.lax.with_sharding_constraint", "reshard": "jax.sharding.reshard",
           "device_put": "jax.device_put"}


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
    primitive: str = ""  # grader.observe.program.ProgramPlacement.primitive


def placed_by(placement: Placement) -> str:
    """What made ``placement``, as the student wrote it (a reshard is a constraint, and is
    judged as one, but the student wrote ``jax.sharding.reshard``)."""
    return WRITTEN.get(placement.primitive) or VIA_NAME.get(placement.via, placement.via)


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
                               else None, any(is_within(k, "result") for k in relation), p.within, p.placed,
                               p.primitive))
    return found


def _seen(placements: list[Placement], names: list[str]) -> dict[tuple[Any, ...], str]:
    """What must be the same whether a function is traced or called: each placement of a value
    computed from the arguments onto a real sharding (keyed for comparing, with its words)."""
    seen = {}
    for p in placements:
        operands = sorted((k, v) for k, v in p.relation.items() if not is_within(k, "result"))
        if p.sharding.get("type") in ("default", None) or not operands:
            continue
        what = " and ".join(f"{k} itself" if v == "exact" else f"a value computed from {k}" for k, v in operands)
        seen[(p.via, tuple(operands), canonical(p.sharding))] = \
            f"{what} by {placed_by(p)} onto {sharding_text(p.sharding, names)}"
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
                return (f"{capital(what)} reports a sharding that describes no layout "
                        f"({sharding_text(held.sharding, names)}), while JAX holds its data on {where}. This "
                        "happens when a mesh or sharding is rewritten after it is made")
            continue
        got = {device: digest_ for device, _, digest_ in held.buffers}
        want = {device: digest(value[tuple(slice(a, b) for a, b in block)]) for device, block in layout.items()}
        if set(got) != set(want) or any(got[d] != want[d] for d in want):
            where = ", ".join(names[d] if d < len(names) else f"#{d}" for d in sorted(got))
            return (f"{capital(what)} reports {sharding_text(held.sharding, names)}, but the data JAX holds on {where} is "
                    "not laid out as that sharding says (what the arrays really hold is what counts). This happens "
                    "when a shard_map's out_specs claim a layout its body does not produce (check_vma=False skips "
                    "JAX's own check of it), or when a mesh, sharding or array is rewritten after it is made")
    return None


def _calls_problem(context: Context, probe: Any, names: list[str]) -> str | None:
    """Did every other call place the arguments, and return its result, as the probe call did?
    Every call is seen whole: eager device_puts, and the shardings and specs of every jitted
    function and shard_map it ran (the recorder keeps JAX's C++ fast path from hiding repeats)."""
    def placed(returned: Any, vias: tuple[str, ...]) -> set[tuple[Any, ...]]:
        return {(p.get("via", "device_put"), p["operand"], canonical(p["sharding"])) for p in returned.placements
                if p.get("via", "device_put") in vias and (p["operand"] or p.get("via") != "device_put")}

    def results(returned: Any) -> dict[str, tuple[Any, ...]]:
        return {leaf.path: canonical(leaf.sharding) for leaf in returned.leaves if leaf.sharding}

    eager, transformed = ("device_put",), ("jit_in", "jit_out", "shard_map_in")
    want_eager, want_transformed, want_results = placed(probe, eager), placed(probe, transformed), results(probe)
    for arguments, other in context.session.calls:
        leaves = argument_leaves(arguments)
        if other is probe or not other.ok:
            continue
        if any(getattr(leaf, "size", 1) == 0 for _, leaf in leaves):
            continue  # JAX lays out what it computes from empty arrays as it likes (replicated, often)
        if not other.intact:
            return _TAMPERED
        returned = ", ".join(f"{leaf.path} of shape {leaf.shape}" for leaf in other.leaves[:3])
        if placed(other, eager) != want_eager or placed(other, transformed) != want_transformed:
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
    traced = context.memo("trace", lambda: context.session.trace(context.probe), seed_free=True)
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


def host_work(context: Context) -> HostWork | None:
    """The first work on the host (a host callback whose result is used, a value pulled to
    NumPy and given back to JAX) in the probe call or any other call."""
    def first() -> HostWork | None:
        for returned in (probe_call(context), *(r for _, r in context.session.calls)):
            if returned.ok and returned.host:
                return returned.host[0]
        return None

    return context.memo("host work", first)


def host_text(work: HostWork, what: str) -> str:
    """Why ``work`` is refused, as a message: ``what`` is the work the task names ("the
    result, from the placed x,")."""
    how = {"callback": f"it calls {work.call}, which runs Python on the host in the middle of the program",
           "round_trip": f"it computes part of it outside JAX: {work.call}"}[work.kind]
    return (f"Your function does part of its work on the host: {how}. The task asks for {what} to be computed by "
            "JAX itself: host callbacks whose results are used and values pulled to NumPy and given back are not "
            "accepted here (a callback that only logs, such as jax.debug.print, is fine)")


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
