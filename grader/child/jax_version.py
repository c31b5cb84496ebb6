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
- Outside the range (0.11.2, whose jaxlib crashes on a pmean over an empty shard; anything from
  0.13 on), ``jaxgrade check`` and ``jaxgrade grade`` print one warning line
  (:func:`range_warning`) and grade.
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


def _release(version: str) -> tuple[int, ...]:
    numbers = []
    for part in version.split("."):
        digits = part[:len(part) - len(part.lstrip("0123456789"))]
        if not digits:
            break
        numbers.append(int(digits))
        if digits != part:  # 0.9.0rc1: the release is 0.9.0
            break
    return tuple(numbers)


def in_range(version: str, supported: str = SUPPORTED) -> bool:
    """Whether JAX ``version`` is in ``supported`` (``jax`` then ``>=``, ``<`` and ``!=`` clauses)."""
    have = _release(version)
    for clause in supported.removeprefix("jax").split(","):
        operator = clause[:2] if clause[:2] in (">=", "!=", "<=", "==") else clause[:1]
        bound = _release(clause[len(operator):])
        padded = have + (0,) * (len(bound) - len(have))
        if not {">=": padded >= bound, "<=": padded <= bound, "<": padded < bound, ">": padded > bound,
                "!=": padded[:len(bound)] != bound, "==": padded[:len(bound)] == bound}[operator]:
            return False
    return True


def range_warning(version: str | None) -> str | None:
    """One line when the installed JAX (``version``; None: none found) is outside the range."""
    if version is None or in_range(version):
        return None
    return (f"jaxgrade: warning: JAX {version} is outside the releases jaxgrade is measured on ({SUPPORTED}): "
            f"grades may be wrong (pip install -c constraints.txt jaxgrade; docs/compatibility.md)")


def installed_jax() -> str | None:
    """The installed JAX's version, read without importing it (the grader's process never does)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("jax")
    except PackageNotFoundError:
        return None
