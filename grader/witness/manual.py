"""Where a program's ``shard_map``s split their inputs, read from its StableHLO text (runs in
the witness): each ``sdy.manual_computation``'s ``in_shardings`` over the ``sdy.mesh`` it
names, described as the child describes a ``NamedSharding`` on the program's devices.

A shard_map's in_specs are applied inside the program that runs it (an eager shard_map's
program takes its operands where they were; one inside a jit, where the jit takes them), so
the program's inputs do not show them: its manual computations do. JAX (0.10) lowers every
shard_map to one through Shardy; a module written otherwise (GSPMD's custom calls) or a
sharding this reading does not know (sub-axes, a mesh written inline) is unreadable, and
then nothing is claimed either way.
"""
from __future__ import annotations

import re
from typing import Any

_MESH = re.compile(r'sdy\.mesh\s+@([\w.$-]+)\s*=\s*<\[([^\]]*)\](?:,\s*device_ids=\[([\d,\s]*)\])?>')
_AXIS = re.compile(r'"([^"]+)"\s*=\s*(\d+)')
_MANUAL = re.compile(r'sdy\.manual_computation\([^)]*\)\s*in_shardings=\[(.*?)\]\s*out_shardings')
_SHARDING = re.compile(r'<@([\w.$-]+),\s*\[([^\]]*)\]')
_DIMENSION = re.compile(r'\{([^}]*)\}')
_NAME = re.compile(r'"([^"]+)"')
MAX_MANUAL = 64  # shardings reported per program


def manual_shardings(text: str) -> list[dict[str, Any]] | None:
    """Every input sharding of every manual computation in ``text`` (a module's MLIR), its
    mesh's devices named by their index in the program's devices; None when one cannot be read."""
    meshes = {}
    for name, axes, ids in _MESH.findall(text):
        named = [(axis, int(size)) for axis, size in _AXIS.findall(axes)]
        meshes[name] = (named, [int(i) for i in ids.split(",")] if ids.strip() else None)
    found: list[dict[str, Any]] = []
    for listed in _MANUAL.findall(text):
        shardings = _SHARDING.findall(listed)
        if len(shardings) != listed.count("<"):  # a mesh written inline, or no reading of it
            return None
        for mesh_name, dimensions in shardings:
            described = _described(meshes.get(mesh_name), _DIMENSION.findall(dimensions))
            if described is None:
                return None
            found.append(described)
    return found[:MAX_MANUAL]


def on_devices(found: list[dict[str, Any]] | None, devices: Any) -> list[dict[str, Any]] | None:
    """``manual_shardings``' descriptions on the program's ``devices`` (real ids, in its order);
    None where they do not fit."""
    if found is None or not isinstance(devices, list):
        return None
    if any(len(s["mesh_devices"]) > len(devices) for s in found):
        return None
    return [{**s, "mesh_devices": [int(devices[i]) for i in s["mesh_devices"]]} for s in found]


def _described(mesh: tuple[list[tuple[str, int]], list[int] | None] | None,
               dimensions: list[str]) -> dict[str, Any] | None:
    """One manual computation input's sharding as the child describes a NamedSharding."""
    if mesh is None:
        return None
    axes, order = mesh
    count = 1
    for _, size in axes:
        count *= size
    logical = order if order is not None else list(range(count))
    if len(logical) != count or sorted(logical) != list(range(count)):
        return None
    spec: list[Any] = []
    for dimension in dimensions:
        if ":" in dimension:  # a sub-axis ("x":(1)2): not read here
            return None
        names = _NAME.findall(dimension)
        spec.append(None if not names else names)
    return {"type": "NamedSharding", "mesh_devices": logical,
            "mesh_shape": [size for _, size in axes], "axis_names": [axis for axis, _ in axes], "spec": spec}
