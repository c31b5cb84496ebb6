"""Shardings as the child describes them (plain dicts), in words and as blocks of an array.

Shared by the structure checks, the layout checks and the evidence cross-checks: how a
``PartitionSpec`` reads, which block of an array each device holds under a sharding, and
the digest the child computes of each device buffer.
"""
from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from grader.observe.layouts import Blocks, Spec, blocks_of, spec_key  # noqa: F401 (the checks' names for them)

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
