"""Whose a program is (runs in the child): the submission's own, or JAX's, and by which name a
report calls the function it was made from (``step at solution.py:12``).

Every route reads this the same way: a jitted call knows the function it traced, a compiled
program only the jaxpr it was lowered from (``traced_from``: filled by the jit route for each
program it meets, so an executable compiled ahead of time, or compiled by a route no hook
meets, is still named by its function), and a program nothing traced in a record only the
source position JAX wrote into it.
"""
from __future__ import annotations

import os
from typing import Any


class Ownership:
    """Which files are the submission's (``student_files``: its file and its folder, set at load)
    and which function each program was traced from."""

    def __init__(self) -> None:
        self.student_files: tuple[str, ...] = ()
        self.traced_from: dict[int, tuple[Any, Any, Any]] = {}  # id(jaxpr) -> (it, function, jit info)

    def is_student(self, function: Any) -> bool:
        """Whether ``function`` (or the file a program was traced from) is the submission's own code."""
        filename = function if isinstance(function, str) else getattr(code_of(function), "co_filename", "")
        return bool(filename) and any(filename == f or filename.startswith(f.rstrip(os.sep) + os.sep)
                                      for f in self.student_files)

    def owns(self, function: Any, info: Any) -> bool:
        """Whether a jitted function is the submission's own: its code, or (through a wrapper
        of JAX's, ``jax.jit(jax.shard_map(f))``) the file JAX says it was defined in."""
        where = str(getattr(info, "fun_sourceinfo", "")).rpartition(" at ")[2].rpartition(":")[0]
        return self.is_student(function) or (bool(where) and self.is_student(where))

    def source(self, params: dict[str, Any], fun: Any = None, info: Any = None) -> tuple[str, bool]:
        """The function a jitted program was made from, as ``step at solution.py:12``, and whether
        it is the submission's own: from the function itself when the call that traced it was
        seen, else from what JAX wrote into the program (an executable compiled ahead of time
        at import)."""
        if fun is not None:
            code = code_of(fun)
            where = str(getattr(info, "fun_sourceinfo", ""))
            if code is not None and " at " not in where:  # a callable object: JAX finds no code in it
                where = f"{type(fun).__name__}.{code.co_name} at {code.co_filename}:{code.co_firstlineno}"
            return source_name(where or str(params.get("name"))), self.owns(fun, info)
        program = params.get("jaxpr")
        if id(program) in self.traced_from:
            _, fun, info = self.traced_from[id(program)]
            return self.source(params, fun, info)
        jaxpr = getattr(program, "jaxpr", program)
        where = str(getattr(getattr(jaxpr, "debug_info", None), "func_src_info", "") or "")
        file = where.rpartition(" at ")[2].rpartition(":")[0]
        named = source_name(where) if " at " in where else str(params.get("name"))
        return named, bool(file) and self.is_student(file)


def code_of(function: Any) -> Any:
    """The code object a callable runs: a function's own, through ``functools.partial`` and
    decorators (``__wrapped__``), a bound method's, or a callable object's ``__call__`` (the shape
    of an Equinox or Flax module); None for a builtin."""
    for _ in range(8):
        code = getattr(function, "__code__", None)
        if code is not None:
            return code
        inner = getattr(function, "func", None) or getattr(function, "__wrapped__", None) \
            or getattr(function, "__func__", None)
        if inner is None and not isinstance(function, type):
            call = getattr(type(function), "__call__", None)
            inner = call if call is not None and hasattr(call, "__code__") else None
        if inner is None:
            return None
        function = inner
    return None


def source_name(sourceinfo: str) -> str:
    """JAX's ``step at /scratch/abc/solution.py:12`` as ``step at solution.py:12``."""
    name, at, where = sourceinfo.rpartition(" at ")
    return f"{name} at {os.path.basename(where)}" if at else sourceinfo
