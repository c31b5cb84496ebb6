"""Counterfactual replays (runs in the child): would the result of a fully recorded call have
changed had a value it placed held other values?

The feeding call (``grader.child.swap``) answers by calling the submission again with its
placing operation handed other values; a submission can notice that (its placed copy no
longer equals its argument) and be honest only then. A replay never runs the submission's
Python: it runs again the operations the call recorded, in order (each eager device_put,
jitted program, eager primitive and eager shard_map, as the call bound them), with the placed
value replaced, and reads what became of the returned leaves. Control flow the submission
chose while its call ran stays as it chose it, and so do the decisions its operations computed:
every boolean an operation made keeps the value it had in the call (``jnp.where(placed == x,
sum(x), sum(placed))`` sums x again), so comparing the placed copy with the argument changes
nothing here, and a result that reaches the placed copy only through ``0 *`` does not change.
A jitted program is run equation by equation for this (``_held``), its decisions held too;
one that makes no decision (no boolean anywhere) is run whole, its call's executable reused.

A replay answers only when it is sound: every operation reached by a replaced value is
re-run, no value went through the host (a pull, then a value given back, breaks the chain the
recorder can see; a pull alone, ``bool(jnp.all(placed == x))``, only chose the path the
replay follows), and no transformation's tracer holds one (an eager ``jax.grad`` records
tracers, not arrays). Otherwise it says nothing (None), and the feeding call decides.

Other values are still values a submission's arithmetic can tell apart from its argument
without a boolean: ``w = exp(-1e30 * sum(|placed - x|))`` is 1 in the call and 0 in any replay,
so ``w * sum(x) + (1 - w) * sum(placed)`` follows the placed copy only when it differs; an
``argmax`` picks between the two alike. So a leaf the replay changed is also followed to first
order at the call's own values (``_still``: a forward-mode derivative, JAX's ``jvp`` of the same
replay, with the placed value the only one moved): every value is the call's, so no comparison
comes out otherwise, and such a blend's derivative is that of the branch the call took (here
the original x's: none). A blend reads something besides the placed copy, so this is asked
only where an operation the placed value reaches does (``_alone``). A leaf that changes
under other values yet not at all to first order is ``"still"``. Custom derivative rules are not used (a ``custom_jvp`` function is followed through
its own body, so a rule cannot claim a dependence) and ``stop_gradient`` passes the change
through (it marks no link as missing); a result honestly built from steps of zero derivative
(``floor``, integer casts) on the path would read as still: no exercise's result is.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from grader.child.jaxpr_graph import sub_programs

MAX_REPLAYED = 8  # placements replayed in one call


@dataclass(frozen=True)
class Inside:
    """A value placed inside a jitted program the call ran (a sharding constraint): the
    ``event``-th recorded operation's program, its variable ``var``."""
    event: int
    var: Any


class Replayer:
    """What a replay runs with: the grader's own JAX and NumPy (taken before the submission),
    JAX's jaxpr evaluator, tracer, literal and dropped-variable classes."""

    def __init__(self, jax: Any, np: Any) -> None:
        from jax._src import core, pjit
        self.jax, self.np = jax, np
        self.eval_jaxpr, self.tracer = core.eval_jaxpr, core.Tracer
        self.literal, self.drop = core.Literal, core.DropVar
        self.run_program = pjit.jit_p.bind  # a recorded jitted program, as its call ran it
        self.decides: dict[int, tuple[Any, bool]] = {}  # id(program) -> (it, makes a boolean?)
        self.contained: dict[int, tuple[Any, bool]] = {}  # id(program) -> (it, reads its operands alone?)

    def follows(self, events: list[tuple[Any, ...]], placed: Any,
                returned: list[tuple[str, Any]]) -> dict[str, str] | None:
        return follows(events, placed, returned, self)


def follows(events: list[tuple[Any, ...]], placed: Any, returned: list[tuple[str, Any]],
            ops: Replayer) -> dict[str, str] | None:
    """For each returned leaf, ``"changed"`` when it changes as ``placed`` holds other values (two
    affine maps of its own, so one that a function's answer ignores does not decide alone) and
    moves with it at the call's own values, ``"still"`` when it changes but does not move
    (:func:`_still`), ``"unchanged"``; None when the replay cannot say."""
    kinds = [event[0] for event in events]
    if "to_host" in kinds and "from_host" in kinds[kinds.index("to_host"):]:
        return None  # a value pulled to NumPy and given back: a link the recorder cannot follow
    np = ops.np
    value = _value_inside(events, placed, ops) if isinstance(placed, Inside) else placed
    if value is None:
        return None
    changed = {path: False for path, _ in returned}
    for other in _other_values(value, ops.jax, np):
        replaced = _replay(events, placed, other, ops)
        if replaced is None:
            return None
        for path, leaf in returned:
            new = replaced.get(id(leaf))
            if new is not None and not _same(new, leaf, np):
                changed[path] = True
    moved = [(p, leaf) for p, leaf in returned if changed[p]]
    still = _still(events, placed, value, moved, ops) if moved and not _alone(events, placed, ops) else {}
    return {path: ("still" if still.get(path) else "changed") if moved else "unchanged" for path, moved in changed.items()}


def _still(events: list[tuple[Any, ...]], placed: Any, value: Any, returned: list[tuple[str, Any]],
           ops: Replayer) -> dict[str, bool]:
    """For each floating returned leaf, whether the replay's forward-mode derivative along a
    fixed direction of ``placed`` (whose value in the call is ``value``), at the call's own values, is zero (or not a number)
    everywhere; empty when ``placed`` is not floating or the derivative cannot be taken (an
    operation without a derivative rule, such as a Pallas kernel)."""
    jax, np = ops.jax, ops.np
    jnp = jax.numpy
    floating = [(path, leaf) for path, leaf in returned if jnp.issubdtype(getattr(leaf, "dtype", bool), jnp.floating)]
    dtype = getattr(value, "dtype", None)
    if not floating or dtype is None or not jnp.issubdtype(dtype, jnp.floating) or jnp.dtype(dtype).itemsize < 2:
        return {}
    direction = jax.device_put(np.random.default_rng(0).standard_normal(np.shape(value)).astype(dtype),
                               value.sharding)

    def replayed(moved: Any) -> list[Any]:
        replaced = _replay(events, placed, moved, ops, whole=False)
        if replaced is None:
            raise ValueError("the replay could not run on a moved value")
        return [replaced.get(id(leaf), leaf) for _, leaf in floating]

    try:  # run equation by equation (a recorded program run whole would be differentiated and compiled anew)
        _, tangents = jax.jvp(replayed, (value,), (direction,))
    except Exception:  # the replay could not run, or JAX lacks a rule
        return {}
    return {path: not bool(np.any(np.isfinite(t) & (t != 0))) for (path, _), t in
            zip(floating, (np.asarray(t, dtype=np.float64) for t in tangents))}


def _replay(events: list[tuple[Any, ...]], placed: Any, other: Any, ops: Replayer,
            whole: bool = True) -> dict[int, Any] | None:
    """id(value the call made) -> the value its operation makes from ``other`` in place of
    ``placed`` (an array the call made, or a value inside one of its programs); None when an
    operation reached by a replaced value cannot be run again. ``whole``: a jitted program
    that makes no decision (no boolean, so nothing for ``_held`` to keep) and donates nothing
    is run as the call ran it, its compiled executable reused: run equation by equation, each
    operation would be compiled for itself first (~5 ms of a graded child)."""
    inside = placed if isinstance(placed, Inside) else None
    replaced: dict[int, Any] = {} if inside is not None else {id(placed): other}
    jax, tracer = ops.jax, ops.tracer
    held = getattr(other, "dtype", None) != bool  # a boolean placed value is data, not a decision
    try:
        for index, event in enumerate(events):
            kind = event[0]
            if kind == "device_put":
                _, xs, devices, outs = event
                for x, target, out in zip(xs, devices, outs):
                    if id(x) in replaced:
                        replaced[id(out)] = jax.device_put(replaced[id(x)], target)
                continue
            if kind == "jit":
                params, args, outs = event[1], event[2], event[3]
            elif kind == "primitive":
                primitive, params, args, out = event[1:5]
                outs = list(out) if primitive.multiple_results else [out]
            elif kind == "shard_map":
                staged, args, outs = event[2], event[3], event[4]
            else:
                continue
            target = inside is not None and index == inside.event and kind == "jit"
            if not target and not any(id(a) in replaced for a in args):
                continue
            if any(isinstance(v, tracer) for v in (*args, *outs)):
                return None  # a tracer: part of a transformation the recorder sees only from outside
            new_args = [replaced.get(id(a), a) for a in args]
            if kind == "jit" and whole and not target and not any(params.get("donated_invars") or ()) \
                    and not _decides(params["jaxpr"], ops):
                made = ops.run_program(*new_args, **params)
            elif kind == "jit":
                program = params["jaxpr"]
                made = _held(program.jaxpr, program.consts, list(args), new_args, ops, held,
                             [inside.var, other, None] if target else None)[1]
            elif kind == "primitive" and primitive.name == "stop_gradient":
                made = new_args  # it passes a change through (see the module's docstring)
            elif kind == "primitive":
                made = primitive.bind(*new_args, **params)
                made = list(made) if primitive.multiple_results else [made]
            else:
                if not hasattr(staged, "jaxpr"):
                    return None  # its body could not be staged: nothing to run again
                made = ops.eval_jaxpr(staged.jaxpr, staged.consts, *new_args)
            for out, new in zip(outs, made):
                if not (held and getattr(out, "dtype", None) == bool):  # a decision keeps the call's value
                    replaced[id(out)] = new
    except Exception:  # a donated operand gone, a shape the program refuses: no answer
        return None
    return replaced


def _decides(program: Any, ops: Replayer) -> bool:
    """Whether a program makes a boolean anywhere (nested programs too): a decision that a
    replay must keep as the call made it (``_held``)."""
    if id(program) not in ops.decides:
        jaxpr = getattr(program, "jaxpr", program)
        ops.decides[id(program)] = (program, any(
            getattr(getattr(var, "aval", None), "dtype", None) == bool for eqn in jaxpr.eqns for var in eqn.outvars)
            or any(_decides(sub, ops) for eqn in jaxpr.eqns for sub in sub_programs(eqn.params)))
    return ops.decides[id(program)][1]


def _alone(events: list[tuple[Any, ...]], placed: Any, ops: Replayer) -> bool:
    """Whether every operation the placed value reaches reads nothing else: no other operand,
    and no constant or literal in its program, at any depth. Each result it reaches is then a
    function of the placed value alone, which no blend is. Any other input (the argument, a copy
    of it, a number read from it by a route no event records, such as a buffer view of x) could
    be one side of a blend, and the first-order replay is asked (``_still``)."""
    if isinstance(placed, Inside) or any(event[0] in ("to_host", "from_host") for event in events):
        return False
    reached = {id(placed)}
    for event in events:
        kind = event[0]
        if kind == "device_put":
            reached.update(id(out) for x, out in zip(event[1], event[3]) if id(x) in reached)
            continue
        if kind == "jit":
            ins, outs, programs = event[2], event[3], [event[1]["jaxpr"]]
        elif kind == "primitive":
            ins, outs = event[3], list(event[4]) if event[1].multiple_results else [event[4]]
            programs = sub_programs(event[2])
        elif kind == "shard_map":
            ins, outs, programs = event[3], event[4], [event[2]]
        elif kind == "convert":
            ins, outs, programs = event[1], [event[2]], []
        else:
            continue
        reads = [id(v) for v in ins]
        if not any(r in reached for r in reads):
            continue
        if not all(r in reached for r in reads) or not all(_self_contained(p, ops) for p in programs):
            return False
        reached.update(id(out) for out in outs)
    return True


def _self_contained(program: Any, ops: Replayer) -> bool:
    """Whether a program computes from its operands alone: no constant, no literal, at any depth."""
    if id(program) not in ops.contained:
        jaxpr = getattr(program, "jaxpr", program)
        ops.contained[id(program)] = (program, hasattr(jaxpr, "eqns") and not getattr(program, "consts", ())
                                      and not getattr(jaxpr, "constvars", ()) and not any(
            isinstance(var, ops.literal) for eqn in jaxpr.eqns for var in eqn.invars)
            and not any(isinstance(var, ops.literal) for var in jaxpr.outvars)
            and all(_self_contained(sub, ops) for eqn in jaxpr.eqns for sub in sub_programs(eqn.params)))
    return ops.contained[id(program)][1]


def _value_inside(events: list[tuple[Any, ...]], inside: Inside, ops: Replayer) -> Any:
    """The value a program's variable held in the call (its program run again on the call's
    operands), or None."""
    event = events[inside.event]
    program, args = event[1]["jaxpr"], list(event[2])
    swap = [inside.var, None, None]
    try:
        _held(program.jaxpr, program.consts, args, args, ops, False, swap)
    except Exception:  # a donated operand gone: no answer
        return None
    return swap[2]


def _held(jaxpr: Any, consts: Any, before: list[Any], after: list[Any], ops: Replayer,
          held: bool, swap: list[Any] | None = None) -> tuple[list[Any], list[Any]]:
    """A jitted program's outputs on its recorded operands (``before``) and on ``after``, run
    equation by equation (nested jitted calls inlined), every boolean an equation makes on
    ``after`` taken from ``before`` when ``held``. ``swap``: [a variable, the value it holds
    on ``after`` in place of what its equation made (None: that), its value on ``before`` (set
    here)]."""
    on_before: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
    on_after = dict(on_before)
    on_before.update(zip(jaxpr.invars, before))
    on_after.update(zip(jaxpr.invars, after))

    def read(env: dict[Any, Any], var: Any) -> Any:
        return var.val if isinstance(var, ops.literal) else env[var]

    for eqn in jaxpr.eqns:
        ins_before = [read(on_before, v) for v in eqn.invars]
        ins_after = [read(on_after, v) for v in eqn.invars]
        name = eqn.primitive.name
        # a nested jitted program, and a function with its own derivative rules, run as their bodies
        inner = eqn.params.get("jaxpr") if name in ("jit", "pjit") else (
            eqn.params.get("call_jaxpr") if name.startswith("custom_") else None)
        if name == "stop_gradient":
            outs_before, outs_after = ins_before, ins_after
        elif inner is not None:
            outs_before, outs_after = _held(inner.jaxpr, inner.consts, ins_before, ins_after, ops, held, swap)
        else:
            bound = eqn.primitive.get_bind_params(eqn.params)  # (subfuns, params) before JAX 0.10
            subfuns, params = bound if isinstance(bound, tuple) else ((), bound)
            with eqn.ctx.manager if hasattr(eqn, "ctx") else contextlib.nullcontext():
                outs_before, outs_after = [eqn.primitive.bind(*subfuns, *ins, **params)
                                           for ins in (ins_before, ins_after)]
            if not eqn.primitive.multiple_results:
                outs_before, outs_after = [outs_before], [outs_after]
        for var, old, new in zip(eqn.outvars, outs_before, outs_after):
            if not isinstance(var, ops.drop):
                on_before[var] = old
                on_after[var] = old if held and getattr(old, "dtype", None) == bool else new
                if swap is not None and var is swap[0]:
                    swap[2] = old
                    on_after[var] = new if swap[1] is None else swap[1]
    return [read(on_before, v) for v in jaxpr.outvars], [read(on_after, v) for v in jaxpr.outvars]


def _other_values(placed: Any, jax: Any, np: Any) -> list[Any]:
    """``placed`` with other values in every element, on its own sharding."""
    value = np.asarray(placed)
    if value.size == 0:
        return []
    if value.dtype.kind == "b":
        others = [~value]
    elif value.dtype.kind in "iu":
        others = [value + 1, value * 2 + 3]
    elif value.dtype.kind in "fc":
        wide = value.astype(np.complex128 if value.dtype.kind == "c" else np.float64)
        others = [1.25 - 0.5 * wide, 2.0 * wide + 3.0]
    else:
        return []
    return [jax.device_put(o.astype(value.dtype), placed.sharding) for o in others]


def _same(new: Any, old: Any, np: Any) -> bool:
    try:
        return bool(np.array_equal(np.asarray(new), np.asarray(old), equal_nan=True))
    except (TypeError, ValueError):
        return False
