"""JAX internals whose names differ across the supported JAX range (pyproject.toml: jax>=0.9,
!=0.11.2,<0.13; docs/compatibility.md says how it was measured).

The routes hook JAX's entry points by their names in the newest releases; where a supported
release names something otherwise, the routes ask here instead of reading JAX directly.

- ``core.ClosedJaxpr`` (up to JAX 0.11) is gone in 0.12, where ``core.Jaxpr`` carries its
  constants (and its ``.jaxpr`` is itself): :func:`closed_jaxpr_class` names the class that does.
- ``pjit._run_python_pjit`` (a jitted call run through Python, hooked by ``route_jit``) exists
  from 0.9 on. JAX 0.8 runs the same code inside ``_python_pjit_helper``; it is not adapted,
  because 0.8 grades some right solutions wrong that the grader cannot help (JAX 0.8 itself
  raises on empty arrays over an Explicit mesh axis, and eager shard_map is observed otherwise
  there): a child on 0.8 stops at once, saying so (:func:`run_python_pjit`), instead of grading.
"""
from __future__ import annotations

from typing import Any

SUPPORTED = "jax>=0.9,!=0.11.2,<0.13"  # pyproject.toml's range (tests/test_jax_range.py keeps them equal)


def run_python_pjit(pjit: Any) -> Any:
    """``pjit._run_python_pjit``; on a JAX without it (0.8 and older), an error naming the range."""
    found = getattr(pjit, "_run_python_pjit", None)
    if found is None:
        import jax
        raise RuntimeError(f"JAX {jax.__version__} is not supported: jaxgrade grades with {SUPPORTED} "
                           "(pip install -c constraints.txt jaxgrade installs the tested versions)")
    return found


def closed_jaxpr_class(core: Any) -> type:
    """The class of a program with its constants: ``core.ClosedJaxpr`` up to JAX 0.11; from 0.12 a
    ``core.Jaxpr`` holds its constants itself (and its ``.jaxpr`` is itself)."""
    return getattr(core, "ClosedJaxpr", core.Jaxpr)
