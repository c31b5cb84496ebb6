"""Explicit sharding as plain data (runs in the child): a mesh's axis types, and the sharding
an array's type states (``jax.typeof(x).sharding``).

With ``jax.make_mesh(..., axis_types=(AxisType.Explicit,))`` the sharding is part of an
array's type: ``jax.typeof(x)`` reads ``float32[16@data,8]``, and ``jax.sharding.reshard``
changes it. Both are read with guards: a JAX without ``AxisType`` or ``jax.typeof`` (older
than the supported range's newest features) simply states nothing, and the checks that need
them say so (``grader.checks.explicit``)."""
from __future__ import annotations

from typing import Any, Callable


def axis_types(mesh: Any) -> dict[str, list[str]]:
    """``{"axis_types": ["Explicit", ...]}`` for a mesh whose axes have types; ``{}`` otherwise."""
    try:
        found = getattr(mesh, "axis_types", None)
        if not found:
            return {}
        return {"axis_types": [str(getattr(kind, "name", kind)) for kind in found]}
    except Exception:  # a mesh rewritten after it was made: nothing to state
        return {}


def typed_sharding(jax: Any, value: Any, describe: Callable[[Any], dict[str, Any]]) -> dict[str, Any] | None:
    """The sharding ``jax.typeof(value)`` states, described like any other (an abstract mesh
    names no devices), or None where this JAX has no ``typeof`` or the type states none."""
    typeof = getattr(jax, "typeof", None)
    if typeof is None:
        return None
    try:
        sharding = getattr(typeof(value), "sharding", None)
        return None if sharding is None else describe(sharding)
    except Exception:  # a sharding whose mesh was rewritten after the array was made
        return None
