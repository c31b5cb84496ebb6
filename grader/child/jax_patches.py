"""What the child changes in JAX at startup, before the submission exists: compiled programs
kept in its memory (``remember_compilations``) and one MLIR context per thread
(``share_ir_context``). Both make a graded child faster and change no program it runs.
Each returns the (module, attribute) pairs it set, which the pins then keep as the grader's
own (``grader.child.pins``): a forked child's pins were taken in the zygote, before these.
"""
from __future__ import annotations

import os
import threading
from typing import Any


def remember_compilations() -> list[tuple[Any, str]]:
    """Keep what this child compiles or reads from the shared compilation cache in its memory,
    above that cache: a program compiled again in the same child (a function jitted anew on
    every call) is then taken from memory instead of compiled again, or read and decompressed
    from disk again (~0.8 ms each time). The executable itself is kept, not its serialised
    bytes, and a child that may not write the shared cache (a confined one: it is mounted
    read-only) no longer serialises and compresses every executable for a write that must
    fail (~4% of a graded child's time). Only this process sees what it kept. A key holds the
    program's device assignment (on CPU JAX never strips it), so an executable kept for one
    key runs on the devices its next compilation asks for."""
    from jax._src import compiler
    read, write = compiler._cache_read, compiler._cache_write
    kept: dict[str, tuple[Any, int]] = {}
    directory = os.environ.get("JAX_COMPILATION_CACHE_DIR")  # read now: the submission may change it

    def cache_read(module_name: str, cache_key: str, *rest: Any) -> tuple[Any, int | None]:
        if len(rest) > 3 and rest[3]:  # JAX 0.11+: host callbacks, bound to what it reads: never kept
            return read(module_name, cache_key, *rest)
        if cache_key not in kept:
            found = read(module_name, cache_key, *rest)
            if found[0] is None:
                return found
            kept[cache_key] = found
        return kept[cache_key]

    def cache_write(cache_key: str, compile_time_secs: float, module_name: str, backend: Any, executable: Any,
                    *host_callbacks: Any) -> None:  # JAX 0.11+ passes none: they are bound at the read
        if host_callbacks and host_callbacks[0]:  # baked into the program: JAX never reuses these either
            return
        kept[cache_key] = (executable, int(compile_time_secs))
        if directory and os.access(directory, os.W_OK):  # asked at the write: confinement comes later
            write(cache_key, compile_time_secs, module_name, backend, executable, *host_callbacks)

    compiler._cache_read, compiler._cache_write = cache_read, cache_write
    return [(compiler, "_cache_read"), (compiler, "_cache_write")]


def share_ir_context() -> list[tuple[Any, str]]:
    """Lower every program of this child in one MLIR context. JAX makes a fresh context for
    each lowering and loads every dialect into it (about 5 ms); a graded child lowers again
    for each first call the recorder must see: ~16% of a graded child's samples. The
    lowered modules are the same text either way (so are their compilation-cache keys); a
    context is per thread, as MLIR asks, and made after the fork, never inherited."""
    from jax._src.interpreters import mlir
    fresh = mlir.make_ir_context
    made: dict[int, Any] = {}

    def make_ir_context() -> Any:
        thread = threading.get_ident()
        if thread not in made:
            made[thread] = fresh()
        return made[thread]

    mlir.make_ir_context = make_ir_context
    return [(mlir, "make_ir_context")]


