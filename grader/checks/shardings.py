"""Shardings as the child describes them (plain dicts), in words and as blocks of an array.

Shared by the structure checks, the layout checks and the evidence cross-checks: how a
``PartitionSpec`` reads, which block of an array each device holds under a sharding, and
the digest the child computes of each device buffer.
"""
from __future__ import annotations

import hashlib
from math import prod
from typing import Any

import numpy as np

Spec = tuple[Any, ...]
Blocks = tuple[tuple[int, int], ...]  # [start, stop) per dimension


def spec_key(spec: Any) -> Spec:
    """A hashable form of a PartitionSpec as the child describes it (lists for tuples)."""
    return tuple(tuple(p) if isinstance(p, list) else p for p in spec)


def spec_text(spec: Spec) -> str:
    return f"PartitionSpec({', '.join(repr(p) for p in spec)})"


def trimmed(spec: Spec) -> Spec:
    """Trailing Nones say nothing: PartitionSpec('data') and PartitionSpec('data', None) lay a
    matrix out the same way, and JAX reports whichever the code wrote."""
    spec = tuple(spec)
    while spec and spec[-1] is None:
        spec = spec[:-1]
    return spec


def sharding_text(sharding: dict[str, Any], names: list[str]) -> str:
    kind = sharding.get("type")
    if kind == "NamedSharding":
        devices = ", ".join(names[i] if isinstance(i, int) and 0 <= i < len(names) else f"#{i}"
                            for i in sharding.get("mesh_devices") or [])
        mesh = "an abstract mesh (no devices)" if sharding.get("mesh_devices") is None else f"mesh over [{devices}]"
        return (f"NamedSharding({mesh} with axes {tuple(sharding.get('axis_names', []))}, "
                f"{spec_text(spec_key(sharding.get('spec', [])))})")
    if kind == "default":
        return "the default device"
    devices = ", ".join(names[i] if isinstance(i, int) and 0 <= i < len(names) else f"#{i}"
                        for i in sharding.get("devices", []))
    return f"{kind}({devices})"


def blocks_of(sharding: dict[str, Any], shape: tuple[int, ...]) -> dict[int, Blocks] | None:
    """Which block of an array of ``shape`` each device holds under ``sharding`` (a described
    NamedSharding, or a single device); None when the description says too little."""
    whole = tuple((0, n) for n in shape)
    if sharding.get("type") != "NamedSharding":
        devices = sharding.get("devices") or []
        return {int(devices[0]): whole} if len(devices) == 1 else None
    ids, mesh_shape = sharding.get("mesh_devices"), tuple(sharding.get("mesh_shape") or ())
    axes = tuple(sharding.get("axis_names") or ())
    if not ids or len(mesh_shape) != len(axes) or prod(mesh_shape) != len(ids):
        return None
    grid = np.array(ids).reshape(mesh_shape)
    sizes = dict(zip(axes, mesh_shape))
    spec = spec_key(sharding.get("spec") or ())
    spec = spec + (None,) * (len(shape) - len(spec))
    layout: dict[int, Blocks] = {}
    for coords in np.ndindex(*mesh_shape):
        where = dict(zip(axes, coords))
        blocks = []
        for n, entry in zip(shape, spec):
            names = () if entry is None else ((entry,) if isinstance(entry, str) else tuple(entry))
            if any(a not in sizes for a in names):
                return None
            count = prod(sizes[a] for a in names)
            index = int(np.ravel_multi_index([where[a] for a in names], [sizes[a] for a in names])) if names else 0
            size = n // count if count else n
            blocks.append((index * size, (index + 1) * size))
        layout[int(grid[coords])] = tuple(blocks)
    return layout


def digest(value: np.ndarray) -> str:
    """The digest the child sends for a buffer holding exactly ``value``."""
    return hashlib.sha1(np.ascontiguousarray(value).tobytes()).hexdigest()[:20]


def canonical(sharding: dict[str, Any]) -> tuple[Any, ...]:
    """What two descriptions of one layout have in common (trailing Nones and memory kind aside)."""
    if sharding.get("type") == "NamedSharding":
        return ("NamedSharding", tuple(sharding.get("mesh_devices") or ()), tuple(sharding.get("axis_names") or ()),
                trimmed(spec_key(sharding.get("spec") or ())))
    return (str(sharding.get("type")), tuple(sharding.get("devices") or ()))


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]
