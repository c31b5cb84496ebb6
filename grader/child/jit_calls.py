"""What the jitted calls of a recorded call did (runs in the child): read from the ``jit`` events
that the jit route and the ahead-of-time route push alike.

For each call: its function and whether it is the submission's own (``ownership``), whether it
was traced, compiled or served from JAX's caches and how many programs it compiled, why it was
traced again (``again``: the closest earlier trace of the same function, and what differs),
the operands it donated and those XLA reused (from the executable: ``grader.child.donation``),
and the leaves of the result its program computed.
"""
from __future__ import annotations

from typing import Any

from grader.child.dataflow import is_staged
from grader.child.ownership import Ownership
from grader.wire import JitCallData, RecompiledData

MAX_JIT_CALLS = 256  # of one call's record: more say nothing new


def jit_calls(events: list[tuple[Any, ...]], ownership: Ownership, traces: dict[str, list[tuple[Any, dict[str, Any]]]],
              leaves: Any = (), returned: Any = ()) -> list[JitCallData]:
    """Every jitted function the call ran, in order: its name, the function (``step at
    solution.py:12``), whether it is the submission's own, whether it was traced (a
    program the recorder had not seen), compiled, or served from JAX's caches, how many
    programs it compiled, why it was traced or compiled again (``again``: what differs from
    the last time this function was; ``traces`` keeps each function's last traces across
    calls), the arguments it donates and those whose buffers XLA reused, and of those, the
    leaves of the graded function's arguments (``leaves``: by path) that went in as they were
    given, not copied, and the leaves of what the function returned (``returned``) that the
    call's program computed."""
    given = {id(value): path for path, value in leaves}
    placed: dict[int, str] = {}  # id of a placed copy of a leaf (jax.device_put) -> the leaf's path
    results = {id(value): path for path, value in returned}
    calls: list[JitCallData] = []
    for event in events:
        if event[0] == "device_put" and len(event) == 4:
            for x, out in zip(event[1], event[3]):
                path = given.get(id(x)) or placed.get(id(x))
                if path is not None and id(out) != id(x):
                    placed[id(out)] = path
            continue
        if event[0] != "jit" or any(is_staged(v) for v in event[2]):
            continue
        # (a forger's events may be shorter: what they lack is unknown, never an error here)
        params, status = event[1], event[4] if len(event) > 4 else "cached"
        call, compiles, reused, copied = event[5] if len(event) > 5 and len(event[5]) == 4 else (None, 0, (), ())
        names = _arg_names(call, len(event[2]))
        entry: dict[str, Any] = {"name": str(params.get("name")), "status": status, "compiles": int(compiles)}
        function, own = ownership.source(params, *((call[1], call[2]) if call is not None else ()))
        if call is not None:
            p, fun, info = call[0], call[1], call[2]
            if status != "cached":
                now = (fun, _signature(p, info, call[3], call[4], event[2]))
                earlier = traces.setdefault(function, [])
                if earlier:  # told apart from the closest earlier trace (JAX keeps them all)
                    entry["again"] = _closest(earlier, now)
                earlier[:] = [*earlier[-31:], now]
        donated = params.get("donated_invars") or ()
        operands = event[2]
        entry.update(function=function, own=own, donated=[names[i] for i, d in enumerate(donated) if d][:16],
                     reused=[names[i] for i in reused][:16],
                     donated_leaves=[given[id(operands[i])] for i, d in enumerate(donated)
                                     if d and i < len(operands) and id(operands[i]) in given][:16],
                     reused_leaves=[given[id(operands[i])] for i in reused if id(operands[i]) in given][:16],
                     computes=[results[id(out)] for out, made in zip(event[3], _computed(params.get("jaxpr")))
                               if made and id(out) in results][:16])
        # a leaf donated as given but kept: JAX placed a copy on the in_shardings and donated that
        copies = [placed[id(operands[i])] for i in reused if i < len(operands) and id(operands[i]) in placed]
        copies += [given[id(operands[i])] for i in copied if i < len(operands) and id(operands[i]) in given]
        if copies:
            entry["placed_reused"] = copies[:16]
        calls.append(entry)
    return calls[:MAX_JIT_CALLS]


def _arg_names(call: Any, count: int) -> list[str]:
    """A name for each flat operand of a jitted call (the program's constants first, unnamed)."""
    if call is None:
        return [f"operand {i}" for i in range(count)]
    p = call[0]
    names = list(p.arg_names or ())
    constants = len(p.consts)
    return ["a constant" if i < constants else (names[i - constants] if i - constants < len(names) else
                                                   f"operand {i}") for i in range(count)]


def _static_text(value: Any) -> tuple[str, Any]:
    """A static argument as text, and what to compare it by: the value itself only for
    Python's own scalars and tuples of them (comparing a submission's object would run its ``__eq__``)."""
    simple = (bool, int, float, complex, str, type(None))
    if type(value) in simple or (type(value) is tuple and len(value) <= 8 and all(type(v) in simple for v in value)):
        text = repr(value)
        return (text if len(text) <= 60 else text[:57] + "..."), value
    return f"a {type(value).__name__} object", id(value)


def _signature(p: Any, info: Any, args: Any, kwargs: Any, operands: Any) -> dict[str, Any]:
    """What a jitted function was traced for: each traced argument's type (shape, dtype, weak
    type) and sharding, and each static argument's value."""
    names = list(p.arg_names or ())
    traced = {}
    for i, aval in enumerate(p.in_avals):
        name = names[i] if i < len(names) else f"operand {i}"
        operand = operands[len(p.consts) + i] if len(p.consts) + i < len(operands) else None
        sharding = getattr(operand, "sharding", None) if type(operand).__name__ == "ArrayImpl" else None
        traced[name] = (str(aval.str_short()) + (" (weakly typed)" if getattr(aval, "weak_type", False) else ""),
                        None if sharding is None else repr(sharding)[:200])
    static = {}
    parameters = list(info.fun_signature.parameters) if getattr(info, "fun_signature", None) is not None else []
    for i in getattr(info, "static_argnums", ()):
        if 0 <= i < len(args):
            static[parameters[i] if i < len(parameters) else f"argument {i}"] = _static_text(args[i])
    for name in getattr(info, "static_argnames", ()):
        if name in kwargs:
            static[name] = _static_text(kwargs[name])
    return {"traced": traced, "static": static}


def _closest(earlier: list[tuple[Any, dict[str, Any]]], now: tuple[Any, dict[str, Any]]) -> RecompiledData:
    """The first change from the earlier trace that differs least, the latest first; one
    difference is the fewest there can be (a function jitted anew on every call meets it at once)."""
    fewest = _changes(earlier[-1], now)
    for trace in reversed(earlier[:-1]):
        if len(fewest) == 1:
            break
        changes = _changes(trace, now)
        if len(changes) < len(fewest):
            fewest = changes
    return fewest[0]


def _changes(earlier: tuple[Any, dict[str, Any]], now: tuple[Any, dict[str, Any]]) -> list[RecompiledData]:
    """How a trace differs from an earlier one of the same function, most telling first
    (``what``: type, sharding, static, arguments, new_function; other when nothing differs)."""
    (fun_before, before), (fun_now, after) = earlier, now
    found: list[RecompiledData] = []
    for name, (kind, sharding) in after["traced"].items():
        was = before["traced"].get(name)
        if was is None:
            found.append({"what": "arguments", "argument": name, "before": "absent", "after": kind})
        elif was[0] != kind:
            found.append({"what": "type", "argument": name, "before": was[0], "after": kind})
        elif was[1] != sharding:
            found.append({"what": "sharding", "argument": name, "before": str(was[1]), "after": str(sharding)})
    for name, (text, value) in after["static"].items():
        was = before["static"].get(name)
        if was is None or type(was[1]) is not type(value) or was[1] != value:
            found.append({"what": "static", "argument": name, "before": "absent" if was is None else was[0],
                          "after": text})
    if not found and (set(before["traced"]) != set(after["traced"]) or set(before["static"]) != set(after["static"])):
        found.append({"what": "arguments", "argument": "", "before": ", ".join(before["traced"]),
                      "after": ", ".join(after["traced"])})
    if not found and fun_before is not fun_now:
        found.append({"what": "new_function", "argument": "", "before": "", "after": ""})
    return found or [{"what": "other", "argument": "", "before": "", "after": ""}]


def _computed(program: Any) -> list[bool]:
    """For each output of a program, whether the program computes it (not an operand or a
    constant passed straight through)."""
    jaxpr = getattr(program, "jaxpr", program)
    passed = set(getattr(jaxpr, "invars", ())) | set(getattr(jaxpr, "constvars", ()))
    return [not hasattr(v, "val") and v not in passed for v in getattr(jaxpr, "outvars", ())]
