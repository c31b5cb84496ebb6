"""The compile route (runs in the child): every program XLA compiles, by whichever route it
was asked for.

- ``compiler.compile_or_get_cached``: XLA asked for a program (counted in
  ``recorder.compiles``, which the jit and ahead-of-time routes read to say a call compiled);
- ``pjit._resolve_and_lower``: a jitted call (``pjit._pjit_call_impl_python``) and an
  executable lowered ahead of time (``stages.Traced.lower``) both lower through it, and it
  knows the program (its jaxpr says which function it was traced from);
- ``MeshComputation.compile``: compiles what was lowered, calling XLA when no executable is
  kept for it. Each compilation during a record is a ``compile`` event.

``compilations`` reads them after the call: a function jitted anew on every call, or
lowered and compiled ahead of time on every call, is as many compilations whatever the route.
"""
from __future__ import annotations

import time
from typing import Any

from grader.child.ownership import Ownership
from grader.wire import CompilationData


def install(recorder: Any, compiler: Any, pjit: Any, pxla: Any) -> list[tuple[Any, str, Any]]:
    """Put the route's hooks in place; returns them as (owner, attribute, hook) for ``intact``."""
    state, push, compiles, seconds = recorder.state, recorder.events.append, recorder.compiles, recorder.compile_s
    clock = time.monotonic
    compile_or_get_cached = compiler.compile_or_get_cached
    resolve_and_lower, compile_ = pjit._resolve_and_lower, pxla.MeshComputation.compile
    lowered: dict[int, tuple[Any, dict[str, Any]]] = {}  # id(computation) -> (it, its program's params)

    def counted_compile(*args: Any, **kwargs: Any) -> Any:
        if state[0] is None:
            return compile_or_get_cached(*args, **kwargs)
        compiles[0] += 1
        began = clock()
        try:
            return compile_or_get_cached(*args, **kwargs)
        finally:  # how long compiling (or reading the compilation cache) took, for grader.timings
            seconds[0] += clock() - began

    def observed_lower(*args: Any, **params: Any) -> Any:
        computation = resolve_and_lower(*args, **params)
        if id(computation) not in lowered:
            lowered[id(computation)] = (computation, {"jaxpr": params.get("jaxpr"), "name": params.get("name")})
        return computation

    def observed_compile(computation: Any, *args: Any, **kwargs: Any) -> Any:
        before = compiles[0]
        executable = compile_(computation, *args, **kwargs)
        if state[0] is not None and compiles[0] != before and id(computation) in lowered:
            push(("compile", lowered[id(computation)][1], compiles[0] - before))
        return executable

    compiler.compile_or_get_cached = counted_compile
    pjit._resolve_and_lower = observed_lower
    pxla.MeshComputation.compile = observed_compile
    return [(compiler, "compile_or_get_cached", counted_compile), (pjit, "_resolve_and_lower", observed_lower),
            (pxla.MeshComputation, "compile", observed_compile)]


def compilations(events: list[tuple[Any, ...]], ownership: Ownership) -> list[CompilationData]:
    """The programs XLA compiled during the call, by the function each was traced from (in
    the order first compiled): the submission's own or JAX's (an eager op's first run at a
    shape), whatever route asked for it."""
    found: dict[str, CompilationData] = {}
    for event in events:
        if event[0] == "compile" and len(event) == 3 and type(event[2]) is int:
            function, own = ownership.source(event[1])
            entry = found.setdefault(function, {"function": function, "own": own, "count": 0})
            entry["count"] += event[2]
    return list(found.values())[:64]
