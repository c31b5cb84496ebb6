"""Host callbacks inside a program (runs in the child): which ones the program's values
depend on, and the program without those nothing reads.

A ``jax.debug.print``, a ``jax.debug.callback``, or an ``io_callback``/``pure_callback`` whose
result no later equation reads only sends values to the host: dropping it changes no value the
program computes. Dropped, the program holds no host callback, so it can be exported and run
again by the witness (a callback's custom call points into the process that traced it), and
what XLA makes of it (its collectives) is read there. A callback whose result the program goes
on to use is kept: the program then cannot be handed over, and the call did part of its work
on the host.
"""
from __future__ import annotations

from typing import Any, Iterable

# Primitives that run Python on the host in the middle of a program, as students write them.
HOST_PRIMITIVES = {"pure_callback": "jax.pure_callback", "io_callback": "jax.experimental.io_callback",
                   "debug_callback": "jax.debug.callback", "debug_print": "jax.debug.print"}
MAX_DEPTH = 16  # nested programs followed
_READS = {"device_put": 1, "jit": 2, "primitive": 3, "shard_map": 3}  # where an event keeps what it read


def read_callbacks(program: Any) -> list[str]:
    """The callbacks anywhere in ``program`` whose results it goes on to use, each named with
    the value it hands back (``jax.pure_callback on_host, giving float32[8,4]``)."""
    found: list[str] = []
    _prune(getattr(program, "jaxpr", program), found, 0)
    return found


def without_unread_callbacks(program: Any) -> Any:
    """``program`` (a jaxpr, open or closed) with every host callback whose results nothing
    reads dropped, at any depth; ``program`` itself where it holds none."""
    if not holds_callback(program):
        return program
    return _rebuilt(program, _prune(getattr(program, "jaxpr", program), [], 0))


def holds_callback(program: Any, depth: int = 0) -> bool:
    """Whether a host callback is anywhere in ``program``."""
    jaxpr = getattr(program, "jaxpr", program)
    return depth < MAX_DEPTH and any(
        eqn.primitive.name in HOST_PRIMITIVES or any(holds_callback(s, depth + 1) for s in _subs(eqn.params))
        for eqn in getattr(jaxpr, "eqns", ()))


def is_read(outs: Iterable[Any], later: list[tuple[Any, ...]], returned: Iterable[Any]) -> bool:
    """Whether any of an eager callback's results ``outs`` is read by an operation among the
    ``later`` recorded events (an eager operation, a jitted call) or ``returned``."""
    read = {id(v) for e in later if e[0] in _READS for v in e[_READS[e[0]]]} | {id(v) for v in returned}
    return any(id(out) in read for out in outs)


def named(primitive: str, params: dict[str, Any], outs: Iterable[Any]) -> str:
    """A callback (its primitive's name and parameters) as the student wrote it, with what it
    gives back (``outs``: its results, or their variables)."""
    name = getattr(getattr(params.get("callback"), "callback_func", None), "__name__", "")
    gives = ", ".join(str(v.aval) for v in outs)
    return f"{HOST_PRIMITIVES[primitive]}{f' {name}' if name else ''}" + (f", giving {gives}" if gives else "")


def _prune(jaxpr: Any, read: list[str], depth: int) -> Any:
    """``jaxpr`` without its unread callbacks (nor the effect-free equations only they read);
    the callbacks kept are added to ``read``."""
    live = {v for v in jaxpr.outvars if not hasattr(v, "val")}
    fed: set[Any] = set()  # what the dropped equations read
    kept: list[Any] = []
    dropped: set[Any] = set()
    for eqn in reversed(jaxpr.eqns):
        used = any(v in live for v in eqn.outvars)
        if not used and (eqn.primitive.name in HOST_PRIMITIVES or _only_fed(eqn, fed)):
            dropped.update(eqn.effects)
            fed.update(v for v in eqn.invars if not hasattr(v, "val"))
            continue
        if eqn.primitive.name in HOST_PRIMITIVES:
            read.append(named(eqn.primitive.name, eqn.params, eqn.outvars))
        elif depth < MAX_DEPTH:
            eqn = _pruned_equation(eqn, read, depth)
        kept.append(eqn)
        live.update(v for v in eqn.invars if not hasattr(v, "val"))
    kept.reverse()
    # a cond's branches all state every branch's effects: one with no callback of its own loses them too
    effects = _effects(jaxpr.effects, set().union(*(eqn.effects for eqn in kept)))
    if len(kept) == len(jaxpr.eqns) and all(a is b for a, b in zip(kept, jaxpr.eqns)) and effects == jaxpr.effects:
        return jaxpr
    return jaxpr.replace(eqns=kept, effects=effects)


def _only_fed(eqn: Any, fed: set[Any]) -> bool:
    """Whether an equation nothing else reads goes with the dropped callbacks it fed (the norm
    a log prints): one that computes, with no effect and no nested program."""
    return not eqn.effects and not _subs(eqn.params) and any(v in fed for v in eqn.outvars)


def _pruned_equation(eqn: Any, read: list[str], depth: int) -> Any:
    params, changed = {}, False
    for key, value in eqn.params.items():
        if isinstance(value, (tuple, list)) and value and all(_is_program(v) for v in value):
            new = type(value)(_rebuilt(v, _prune(getattr(v, "jaxpr", v), read, depth + 1)) for v in value)
        elif _is_program(value):
            new = _rebuilt(value, _prune(getattr(value, "jaxpr", value), read, depth + 1))
        else:
            new = value
        changed = changed or new is not value and any(a is not b for a, b in zip(_flat(new), _flat(value)))
        params[key] = new
    if not changed:
        return eqn
    inner = set().union(*(getattr(s, "jaxpr", s).effects for s in _subs(params)))
    return eqn.replace(params=params, effects=_effects(eqn.effects, inner))


def _effects(effects: Any, remaining: set[Any]) -> Any:
    """``effects`` less those of the callbacks dropped: any of a callback's kind not still in
    ``remaining`` (what the kept equations have)."""
    callback_kinds = ("DebugEffect", "OrderedDebugEffect", "IOEffect", "OrderedIOEffect")
    return type(effects)(e for e in effects if type(e).__name__ not in callback_kinds or e in remaining)


def _is_program(value: Any) -> bool:
    return hasattr(value, "eqns") or hasattr(getattr(value, "jaxpr", None), "eqns")


def _flat(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _subs(params: dict[str, Any]) -> list[Any]:
    return [v for value in params.values() for v in _flat(value) if _is_program(v)]


def _rebuilt(program: Any, jaxpr: Any) -> Any:
    """``program`` with ``jaxpr`` as its body: a closed program keeps its constants."""
    inner = getattr(program, "jaxpr", program)
    if jaxpr is inner:
        return program
    return type(program)(jaxpr, program.consts) if inner is not program else jaxpr
