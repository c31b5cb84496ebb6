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
A jitted program is run equation by equation for this (``_held``), its decisions held too.

A replay answers only when it is sound: every operation reached by a replaced value is
re-run, no value went through the host (a pull, then a value given back, breaks the chain the
recorder can see; a pull alone, ``bool(jnp.all(placed == x))``, only chose the path the
replay follows), and no transformation's tracer holds one (an eager ``jax.grad`` records
tracers, not arrays). Otherwise it says nothing (None), and the feeding call decides.
"""
from __future__ import annotations

import contextlib
from typing import Any

MAX_REPLAYED = 8  # placements replayed in one call


class Replayer:
    """What a replay runs with: the grader's own JAX and NumPy (taken before the submission),
    JAX's jaxpr evaluator, tracer, literal and dropped-variable classes."""

    def __init__(self, jax: Any, np: Any) -> None:
        from jax._src import core
        self.jax, self.np = jax, np
        self.eval_jaxpr, self.tracer = core.eval_jaxpr, core.Tracer
        self.literal, self.drop = core.Literal, core.DropVar

    def follows(self, events: list[tuple[Any, ...]], placed: Any,
                returned: list[tuple[str, Any]]) -> dict[str, bool] | None:
        return follows(events, placed, returned, self)


def follows(events: list[tuple[Any, ...]], placed: Any, returned: list[tuple[str, Any]],
            ops: Replayer) -> dict[str, bool] | None:
    """For each returned leaf, whether it changes when ``placed`` holds other values (two affine
    maps of its own, so one that a function's answer ignores does not decide alone), or None
    when the replay cannot say."""
    kinds = [event[0] for event in events]
    if "to_host" in kinds and "from_host" in kinds[kinds.index("to_host"):]:
        return None  # a value pulled to NumPy and given back: a link the recorder cannot follow
    np = ops.np
    changed = {path: False for path, _ in returned}
    for other in _other_values(placed, ops.jax, np):
        replaced = _replay(events, placed, other, ops)
        if replaced is None:
            return None
        for path, leaf in returned:
            new = replaced.get(id(leaf))
            if new is not None and not _same(new, leaf, np):
                changed[path] = True
    return changed


def _replay(events: list[tuple[Any, ...]], placed: Any, other: Any, ops: Replayer) -> dict[int, Any] | None:
    """id(value the call made) -> the value its operation makes from ``other`` in place of
    ``placed``; None when an operation reached by a replaced value cannot be run again."""
    replaced: dict[int, Any] = {id(placed): other}
    jax, tracer = ops.jax, ops.tracer
    held = getattr(placed, "dtype", None) != bool  # a boolean placed value is data, not a decision
    try:
        for event in events:
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
            if not any(id(a) in replaced for a in args):
                continue
            if any(isinstance(v, tracer) for v in (*args, *outs)):
                return None  # a tracer: part of a transformation the recorder sees only from outside
            new_args = [replaced.get(id(a), a) for a in args]
            if kind == "jit":
                program = params["jaxpr"]
                made = _held(program.jaxpr, program.consts, list(args), new_args, ops, held)[1]
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


def _held(jaxpr: Any, consts: Any, before: list[Any], after: list[Any], ops: Replayer,
          held: bool) -> tuple[list[Any], list[Any]]:
    """A jitted program's outputs on its recorded operands (``before``) and on ``after``, run
    equation by equation (nested jitted calls inlined), every boolean an equation makes on
    ``after`` taken from ``before`` when ``held``."""
    on_before: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
    on_after = dict(on_before)
    on_before.update(zip(jaxpr.invars, before))
    on_after.update(zip(jaxpr.invars, after))

    def read(env: dict[Any, Any], var: Any) -> Any:
        return var.val if isinstance(var, ops.literal) else env[var]

    for eqn in jaxpr.eqns:
        ins_before = [read(on_before, v) for v in eqn.invars]
        ins_after = [read(on_after, v) for v in eqn.invars]
        inner = eqn.params.get("jaxpr") if eqn.primitive.name in ("jit", "pjit") else None
        if inner is not None:
            outs_before, outs_after = _held(inner.jaxpr, inner.consts, ins_before, ins_after, ops, held)
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
