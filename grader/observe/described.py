"""The shape of what a call reply describes in words of its own: shardings, meshes, shards.

The checks read these descriptions field by field (a mesh's devices, a spec's axes, a shard's
index), and a submission can write any JSON on its channel. So every description is checked
here, where the session parses the reply, against what the child's ``describe_sharding``,
``describe_shards`` and ``grader.child.jaxpr_graph.simple_param`` can write: a description of
another shape is the submission's doing (:class:`Malformed`, a "protocol" incident), never a
check failing inside the grader ("not your fault").
"""
from __future__ import annotations

from typing import Any, Callable

from grader.errors import Malformed


def _ints(value: Any) -> bool:
    return isinstance(value, list) and all(type(n) is int for n in value)


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(n, str) for n in value)


def _spec(value: Any) -> bool:
    """A PartitionSpec as described: per dimension None, an axis name, or a list of them."""
    return isinstance(value, list) and all(p is None or isinstance(p, str) or _names(p) for p in value)


# Each field a description may hold, and what its value may be.
FIELDS: dict[str, Callable[[Any], bool]] = {
    "type": lambda v: isinstance(v, str),
    "devices": _ints,
    "mesh_devices": lambda v: v is None or _ints(v),
    "mesh_shape": _ints,
    "axis_names": _names,
    "axis_types": _names,  # a mesh's axis types by name (grader.child.typed): "Explicit", "Auto", "Manual"
    "spec": _spec,
    "memory_kind": lambda v: v is None or isinstance(v, str),
    "error": lambda v: isinstance(v, str),  # an unreadable sharding: why
}


def check_description(value: Any, where: str) -> None:
    """A sharding, mesh or unspecified-sharding description, as the child writes them."""
    if not isinstance(value, dict) or "type" not in value:
        raise Malformed(f"{where} is not a description with a type")
    for key, field in value.items():
        test = FIELDS.get(key)
        if test is None or not test(field):
            raise Malformed(f"{where} has a field {key!r} of the wrong kind")


def check_shards(value: Any, where: str) -> None:
    """A returned array's shards: a device id and [start, stop) per dimension each."""
    if not isinstance(value, list):
        raise Malformed(f"{where} is not a list")
    for shard in value:
        if not (isinstance(shard, dict) and set(shard) == {"device", "index"} and type(shard["device"]) is int
                and isinstance(shard["index"], list) and all(_ints(pair) and len(pair) == 2 for pair in shard["index"])):
            raise Malformed(f"{where} holds a shard that is not a device and an index")


def check_params(value: Any, where: str, depth: int = 0) -> None:
    """A program node's parameters: JSON whose every object is a description (the child writes
    nothing else as an object there)."""
    if depth > 16:
        raise Malformed(f"{where} is nested deeper than parameters are")
    if isinstance(value, dict):
        if depth == 0:  # the parameters themselves, by name
            for key, inner in value.items():
                check_params(inner, where, depth + 1)
            return
        check_description(value, where)
    elif isinstance(value, list):
        for inner in value:
            check_params(inner, where, depth + 1)


def check_reply(reply: dict[str, Any]) -> None:
    """Every description a call reply holds: its placements', its returned leaves' (sharding and
    shards), and its program's (the arrays' shardings, the nodes' parameters)."""
    placements = reply.get("placements")
    for placement in placements if isinstance(placements, list) else ():
        if isinstance(placement, dict):
            check_description(placement.get("sharding"), "a placement's sharding")
    value = reply.get("value")
    leaves = value.get("leaves") if isinstance(value, dict) else None
    for leaf in leaves if isinstance(leaves, list) else ():
        if isinstance(leaf, dict):
            if leaf.get("sharding") is not None:
                check_description(leaf["sharding"], "a returned array's sharding")
            if leaf.get("typed_sharding") is not None:
                check_description(leaf["typed_sharding"], "a returned array's typed sharding")
            if "shards" in leaf:
                check_shards(leaf["shards"], "a returned array's shards")
    program = reply.get("program")
    if isinstance(program, dict):
        check_program(program)


def check_program(program: dict[str, Any]) -> None:
    """The descriptions of a program graph (a full record's or a trace's)."""
    arrays = program.get("arrays")
    if isinstance(arrays, dict):
        for found in arrays.values():
            if not isinstance(found, dict):
                raise Malformed("a program's array is not an object")
            check_description(found.get("sharding"), "a program array's sharding")
    avals = program.get("avals")
    if isinstance(avals, dict) and not all(isinstance(a, dict) for a in avals.values()):
        raise Malformed("a program's abstract values are not objects")
    nodes = program.get("nodes")
    for node in nodes if isinstance(nodes, list) else ():
        if isinstance(node, dict):
            check_params(node.get("params", {}), f"the parameters of a {str(node.get('primitive'))[:40]} node")
