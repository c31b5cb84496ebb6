"""Which block of an array each device holds under a sharding as the child describes it (a
plain dict): read by the structure and layout checks (``grader.checks.shardings``) and by the
parent's comparison of the child's record with the witness's run (``grader.observe.confirmed``);
and the same blocks as the data a failed check's result carries to be drawn (``layout_of``).
"""
from __future__ import annotations

from math import prod
from typing import Any

import numpy as np

from grader.array_layout import ArrayLayout, Block

Spec = tuple[Any, ...]
Blocks = tuple[tuple[int, int], ...]  # [start, stop) per dimension


def spec_key(spec: Any) -> Spec:
    """A hashable form of a PartitionSpec as the child describes it (lists for tuples)."""
    return tuple(tuple(p) if isinstance(p, list) else p for p in spec)


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


def layout_of(sharding: dict[str, Any], shape: tuple[int, ...], names: list[str],
              held: dict[int, Blocks] | None = None) -> ArrayLayout | None:
    """An array of ``shape`` under ``sharding`` as data to draw: each distinct block once, with
    every device holding it. ``held``: which block each device really holds (a returned array's
    shards, what its buffers show), where known; else what ``sharding`` assigns (``blocks_of``).
    None when neither says."""
    held = blocks_of(sharding, shape) if held is None else held
    if not held:
        return None
    holders: dict[Blocks, list[int]] = {}
    for device, block in held.items():
        holders.setdefault(block, []).append(device)
    named = sharding.get("type") == "NamedSharding"
    return ArrayLayout(shape=tuple(shape), mesh_shape=tuple(sharding.get("mesh_shape") or ()) if named else (),
                       axis_names=tuple(sharding.get("axis_names") or ()) if named else (),
                       spec=spec_key(sharding.get("spec") or ()) if named else (),
                       blocks=tuple(Block(block, tuple(sorted(devices))) for block, devices in sorted(holders.items())),
                       device_names=tuple(names))
