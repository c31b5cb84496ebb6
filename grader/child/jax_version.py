"""JAX internals whose names differ across the supported JAX range (pyproject.toml, docs/compatibility.md).

The routes hook JAX's entry points by the names of the newest releases; what an older release
lacks is made here, from that release's own code, so every route reads one name.

- ``pjit._run_python_pjit(p, args_flat, fun, args, kwargs)`` (JAX 0.9 and later): a jitted call
  run through Python once its parameters are inferred. JAX 0.8 runs the same code inside
  ``_python_pjit_helper(fun, jit_info, *args, **kwargs)``, whose first statement infers them
  (``p, args_flat = _infer_params(...)``). :func:`run_python_pjit` splits that helper where
  0.9 did: the rest of its body becomes ``_run_python_pjit``, compiled from JAX's own source
  into JAX's own module (so every name in it is looked up there, hooks included, as in 0.9),
  and the helper becomes the two calls 0.9 makes. Nothing else of JAX is copied or changed.
- ``core.ClosedJaxpr`` (up to JAX 0.11): gone in 0.12, where ``core.Jaxpr`` carries its
  constants; :func:`closed_jaxpr_class` names the class that does.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

_HELPER = "_python_pjit_helper"
_RUN = "_run_python_pjit"


def run_python_pjit(pjit: Any) -> Any:
    """``pjit._run_python_pjit``, made from ``pjit._python_pjit_helper`` where JAX has only that."""
    found = getattr(pjit, _RUN, None)
    if found is not None:
        return found
    helper = getattr(pjit, _HELPER, None)
    if helper is None:
        raise AttributeError(f"this JAX has neither pjit.{_RUN} nor pjit.{_HELPER}: not a supported release")
    tree = ast.parse(textwrap.dedent(inspect.getsource(helper)))
    function = tree.body[0]
    first = function.body[0] if isinstance(function, ast.FunctionDef) else None
    if not (isinstance(first, ast.Assign) and isinstance(first.value, ast.Call)
            and isinstance(first.value.func, ast.Name) and first.value.func.id == "_infer_params"
            and ast.unparse(first.targets[0]).replace("(", "").replace(")", "") == "p, args_flat"):
        raise AttributeError(f"pjit.{_HELPER} of this JAX does not begin with `p, args_flat = _infer_params(...)`: "
                             "not a supported release")
    assert isinstance(function, ast.FunctionDef)
    function.name = _RUN
    function.decorator_list = []
    function.args = ast.parse(f"def {_RUN}(p, args_flat, fun, args, kwargs): pass").body[0].args  # type: ignore[attr-defined]
    function.body = function.body[1:]
    split = ast.parse(f"def {_HELPER}(fun, jit_info, *args, **kwargs):\n"
                      f"  p, args_flat = _infer_params(fun, jit_info, args, kwargs)\n"
                      f"  return {_RUN}(p, args_flat, fun, args, kwargs)\n").body[0]
    module = ast.Module(body=[function, split], type_ignores=[])
    ast.fix_missing_locations(module)
    exec(compile(module, inspect.getsourcefile(helper) or "<jax pjit>", "exec"), vars(pjit))  # noqa: S102
    return getattr(pjit, _RUN)


def closed_jaxpr_class(core: Any) -> type:
    """The class of a program with its constants: ``core.ClosedJaxpr`` up to JAX 0.11; from 0.12 a
    ``core.Jaxpr`` holds its constants itself (and its ``.jaxpr`` is itself)."""
    return getattr(core, "ClosedJaxpr", core.Jaxpr)
