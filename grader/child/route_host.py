"""The host route (runs in the child): work a call does on the host in the middle of its JAX
work, which no compiled program shows.

- ``ArrayImpl._value`` and NumPy's ``asarray``/``array``/``asanyarray``/``ascontiguousarray``:
  a JAX array pulled to the host (``np.asarray``, ``float()``, ``.item()``, ``print``). NumPy
  reads a CPU array through the buffer protocol, which no Python hook sees, so the conversion
  functions themselves are where a pull shows;
- ``custom_vjp.__call__`` and ``custom_jvp.__call__``: a custom derivative rule applied;
- ``from_host``, called by the other routes: a NumPy value given to JAX (after a pull, a round
  trip through the host);
- host callbacks (``HOST_PRIMITIVES``) inside a program, found in its jaxpr.

``host_work`` reads what these events say after the call.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable

from grader.child.jaxpr_graph import sub_programs
from grader.child.ownership import Ownership
from grader.wire import HostData

MAX_FRAMES = 64  # of the stack read at a pull: the submission's line is near the top or nowhere
# Primitives that run Python on the host in the middle of a program.
HOST_PRIMITIVES = {"pure_callback": "jax.pure_callback", "io_callback": "jax.experimental.io_callback",
                   "debug_callback": "jax.debug.callback"}


def host_types() -> tuple[type, ...]:
    import numpy as np
    return (np.ndarray, np.generic)  # JAX wraps NumPy operands of eager primitives in an ndarray subclass


def from_host_pusher(push: Callable[[Any], None]) -> Callable[[Any, str], None]:
    """``from_host(values, via)``: record that NumPy values were given to JAX through ``via``
    (a Python number is weakly typed: a constant, not data)."""
    types = host_types()

    def from_host(values: Any, via: str) -> None:
        if any(isinstance(v, types) and not getattr(v, "weak_type", False) for v in values):
            push(("from_host", via))
    return from_host


def student_line(ownership: Ownership, frame: Any) -> str | None:
    """The submission's innermost line on the stack from ``frame`` up (``solution.py:12``):
    where it pulled a value to the host, however deep in JAX the pull happened (iterating over
    a sharded array pulls inside ``ArrayImpl.__iter__``). None where no frame is its own."""
    for _ in range(MAX_FRAMES):
        if frame is None:
            return None
        if ownership.is_student(frame.f_code.co_filename):
            return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def install(recorder: Any, array_class: Any, custom_rules: tuple[Any, ...], numpy: Any) -> list[tuple[Any, str, Any]]:
    """Put the route's hooks in place; returns them as (owner, attribute, hook) for ``intact``."""
    state, push, full, ownership = recorder.state, recorder.events.append, recorder.FULL, recorder.ownership
    pull = array_class.__dict__["_value"].fget

    def pulled(array: Any) -> Any:
        if state[0] is not None and not state[1]:
            push(("to_host", student_line(ownership, sys._getframe(1))))
        return pull(array)

    def converter(convert: Callable[..., Any]) -> Callable[..., Any]:
        def converted(value: Any, *args: Any, **kwargs: Any) -> Any:
            if state[0] is not None and not state[1] and type(value) is array_class:
                push(("to_host", student_line(ownership, sys._getframe(1))))
            out = convert(value, *args, **kwargs)
            if state[0] == full and not state[1] and type(value) is float:
                push(("convert", (value,), out))  # jnp.float32(lr) goes through NumPy: still lr
            return out
        converted.__name__, converted.__doc__ = convert.__name__, convert.__doc__
        return converted

    def observed_rule(call: Callable[..., Any], kind: str) -> Callable[..., Any]:
        def observed(rule: Any, *args: Any, **kwargs: Any) -> Any:
            if state[0] is not None and not state[1]:
                push(("custom_rule", kind, rule))
            return call(rule, *args, **kwargs)
        return observed

    value_property = property(pulled)
    array_class._value = value_property
    hooks: list[tuple[Any, str, Any]] = [(array_class, "_value", value_property)]
    for name in ("asarray", "array", "asanyarray", "ascontiguousarray"):
        hook = converter(getattr(numpy, name))
        setattr(numpy, name, hook)
        hooks.append((numpy, name, hook))
    for rule_class in custom_rules:
        hook = observed_rule(rule_class.__call__, rule_class.__name__)
        rule_class.__call__ = hook
        hooks.append((rule_class, "__call__", hook))
    return hooks


def host_work(events: list[tuple[Any, ...]], ownership: Ownership,
              known: dict[int, tuple[Any, tuple[tuple[str, str], ...]]]) -> list[HostData]:
    """What the call did on the host in the middle of its JAX work: host callbacks, custom
    derivative rules of the student's own, and values pulled to NumPy and given back to
    JAX afterwards. Each: ``kind`` (callback, custom_rule, round_trip) and ``call``. ``known``
    keeps what each program holds (id(program) -> (it, host work inside)) across calls."""
    found: dict[tuple[str, str], None] = {}
    left = False  # some value went to the host (a pull, a debug callback) before this event
    lines: dict[str, None] = {}  # the submission's lines that pulled them, in order
    for event in events:
        kind, inside = event[0], ()
        if kind == "to_host":
            left = True
            if len(event) > 1 and isinstance(event[1], str):
                lines[event[1]] = None
        elif kind == "from_host" and left:
            at = f" at {', '.join(list(lines)[:3])}" if lines else ""
            found[("round_trip", f"a JAX array pulled to NumPy{at} (np.asarray, float(), .item(), print, iterating "
                                 f"over an array), then a NumPy value given back to JAX ({event[1]})")] = None
        elif kind == "primitive" and event[1].name in HOST_PRIMITIVES:
            inside = ((event[1].name, HOST_PRIMITIVES[event[1].name]),)
        elif kind == "custom_rule" and ownership.is_student(getattr(event[2], "fun", None)):
            found[("custom_rule", f"jax.{event[1]} {_name(event[2])}")] = None
        elif kind in ("jit", "shard_map"):
            program = event[1].get("jaxpr")
            if program is not None:
                if id(program) not in known:
                    known[id(program)] = (program, tuple(_host_equations(program, ownership.is_student)))
                inside = known[id(program)][1]
        for primitive, call in inside:
            if primitive == "debug_callback":
                left = True
            else:
                found[("custom_rule" if primitive.startswith("custom") else "callback", call)] = None
    return [{"kind": k, "call": c} for k, c in list(found)[:8]]


def _name(rule: Any) -> str:
    return str(getattr(getattr(rule, "fun", None), "__name__", "") or getattr(rule, "__name__", "") or "")


def _host_equations(program: Any, is_student: Callable[[Any], bool], depth: int = 0) -> list[tuple[str, str]]:
    """Host callbacks and the student's own custom derivative rules anywhere in a program."""
    jaxpr = getattr(program, "jaxpr", program)
    found: list[tuple[str, str]] = []
    for eqn in getattr(jaxpr, "eqns", ()) if depth < 16 else ():
        name = eqn.primitive.name
        if name in HOST_PRIMITIVES:
            found.append((name, HOST_PRIMITIVES[name]))
        elif name in ("custom_vjp_call", "custom_jvp_call", "custom_vjp_call_jaxpr"):
            inner = eqn.params.get("call_jaxpr") or eqn.params.get("fun_jaxpr")
            source = getattr(getattr(getattr(inner, "jaxpr", inner), "debug_info", None), "func_src_info", None) or ""
            at = source.rfind(" at ")
            if at >= 0 and is_student(source[at + 4:].rsplit(":", 1)[0]):
                found.append((name, f"jax.{name.removesuffix('_call').removesuffix('_call_jaxpr')} "
                                    f"{source[:at]}"))
        for sub in sub_programs(eqn.params):
            found.extend(_host_equations(sub, is_student, depth + 1))
    return found
