"""A sharding as plain data: what the child says of every placement and returned array, and
what the witness (``grader.witness.rerun``) says of the arrays it made when it ran the call's
account again. One function on both sides, so the parent compares like with like
(``grader.observe.confirmed``)."""
from __future__ import annotations

from typing import Any

from grader.child.typed import axis_types

# The memory kind each of JAX's memory spaces places a value in (jax.memory.Space.Host: pinned_host)
MEMORY_SPACES = {"Host": "pinned_host", "Device": "device"}


def memory_kind_of(target: Any) -> str | None:
    """Where in a device's memories a placement puts the value: a sharding's memory kind, or
    the kind a memory space names; None where the target says nothing of it."""
    if type(target).__name__ == "MemorySpace":
        return MEMORY_SPACES.get(str(getattr(target, "name", "")))
    kind = getattr(target, "memory_kind", None)
    return kind if isinstance(kind, str) else None


def describe_sharding(target: Any, device: type, named: type) -> dict[str, Any]:
    """``target`` (a sharding, a device, a memory space or None) as ``grader.wire``'s sharding
    data; ``device``, ``named``: JAX's ``Device`` and ``NamedSharding`` classes, as the caller
    took them before any submission could replace them."""
    if target is None:
        return {"type": "default"}
    if isinstance(target, device):
        return {"type": "Device", "devices": [target.id]}
    if isinstance(target, named):
        mesh = target.mesh
        try:
            devices = [int(d.id) for d in mesh.devices.flat]
        except (AttributeError, ValueError):  # an AbstractMesh (inside some transformations) names no devices
            devices = None
        return {
            "type": "NamedSharding",
            "mesh_devices": devices,
            "mesh_shape": [int(n) for n in dict(mesh.shape).values()],
            "axis_names": [str(a) for a in mesh.axis_names],
            "spec": [list(p) if isinstance(p, tuple) else p for p in target.spec],
            "memory_kind": target.memory_kind,
            **axis_types(mesh),
        }
    device_set = getattr(target, "device_set", None)
    devices = sorted(int(d.id) for d in device_set) if device_set else []
    described = {"type": type(target).__name__, "devices": devices}
    kind = memory_kind_of(target)
    if kind is not None:
        described["memory_kind"] = kind
    return described
