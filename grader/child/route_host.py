"""The host route (runs in the child): work a call does on the host in the middle of its JAX
work, which no compiled program shows.

- ``ArrayImpl._value`` and NumPy's ``asarray``/``array``/``asanyarray``/``ascontiguousarray``:
  a JAX array pulled to the host (``np.asarray``, ``float()``, ``.item()``, ``print``). NumPy
  reads a CPU array through the buffer protocol, which no Python hook sees, so the conversion
  functions themselves are where a pull shows;
- ``from_host``, called by the other routes: a NumPy value given to JAX (after a pull, a round
  trip through the host);
- host callbacks (``grader.child.callbacks.HOST_PRIMITIVES``) whose results the call goes on
  to use, inside a program (found in its jaxpr) or eager. One whose results nothing reads (a
  ``jax.debug.print``, a logging ``io_callback``) only sends values to the host.

A custom derivative rule (``jax.custom_vjp``, ``jax.custom_jvp``) is not host work: its primal
is ordinary JAX, in the program like any other function, and the gradient it gives, where a
task asks for one, is what the value checks compare with the exercise's answer.

``host_work`` reads what these events say after the call.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable

from grader.child.callbacks import HOST_PRIMITIVES, holds_callback, is_read, named, read_callbacks
from grader.child.ownership import Ownership
from grader.wire import HostData

MAX_FRAMES = 64  # of the stack read at a pull: the submission's line is near the top or nowhere


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


def install(recorder: Any, array_class: Any, numpy: Any) -> list[tuple[Any, str, Any]]:
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

    value_property = property(pulled)
    array_class._value = value_property
    hooks: list[tuple[Any, str, Any]] = [(array_class, "_value", value_property)]
    for name in ("asarray", "array", "asanyarray", "ascontiguousarray"):
        hook = converter(getattr(numpy, name))
        setattr(numpy, name, hook)
        hooks.append((numpy, name, hook))
    return hooks


def host_work(events: list[tuple[Any, ...]], returned: list[Any],
              known: dict[int, tuple[Any, tuple[str, ...], bool]]) -> list[HostData]:
    """What the call did on the host in the middle of its JAX work: host callbacks whose results
    it used (``returned``: the leaves it returned), and values pulled to NumPy and given back to
    JAX afterwards. Each: ``kind`` (callback, round_trip) and ``call``. ``known`` keeps what each
    program holds (id(program) -> (it, callbacks read, any callback at all)) across calls."""
    found: dict[tuple[str, str], None] = {}
    left = False  # some value went to the host (a pull, a callback) before this event
    lines: dict[str, None] = {}  # the submission's lines that pulled them, in order
    for index, event in enumerate(events):
        kind, read, sent = event[0], (), False
        if kind == "to_host":
            left = True
            if len(event) > 1 and isinstance(event[1], str):
                lines[event[1]] = None
        elif kind == "from_host" and left:
            at = f" at {', '.join(list(lines)[:3])}" if lines else ""
            found[("round_trip", f"a JAX array pulled to NumPy{at} (np.asarray, float(), .item(), print, iterating "
                                 f"over an array), then a NumPy value given back to JAX ({event[1]})")] = None
        elif kind == "primitive" and event[1].name in HOST_PRIMITIVES:
            outs = list(event[4]) if event[1].multiple_results else [event[4]]
            sent = True
            if is_read(outs, events[index + 1:], returned):
                read = (named(event[1].name, event[2], outs),)
        elif kind in ("jit", "shard_map"):
            program = event[1].get("jaxpr")
            if program is not None:
                if id(program) not in known:
                    known[id(program)] = (program, tuple(read_callbacks(program)), holds_callback(program))
                read, sent = known[id(program)][1:]
        left = left or sent
        for call in read:
            found[("callback", f"{call}, whose result your function goes on to use")] = None
    return [{"kind": k, "call": c} for k, c in list(found)[:8]]

