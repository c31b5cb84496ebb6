"""What a recorded call placed and computed, as values flowing between operations (runs in the
child): read from the events every route pushes, after the call.

``placements_of`` is the cheap record every call keeps (each placement and the argument leaf
it placed); ``program_of_call`` is a fully recorded call as one program in the traced
program's terms (``grader.child.jaxpr_graph``), with the real buffers of every array it placed
and returned. Values are identified by the objects themselves (all kept alive until the
program is built), so the dataflow is exact: the result derives from a placed array only if
it was computed from it.
"""
from __future__ import annotations

import hashlib
from typing import Any, Callable

from grader.child.jaxpr_graph import Builder, Describe, context_mesh, mesh_data, simple_param
from grader.child.replay import MAX_REPLAYED, Inside
from grader.wire import WIDENED, Placement


def placements_of(events: list[tuple[Any, ...]], leaves: list[tuple[str, Any]], describe: Describe) -> list[Placement]:
    """The placements a call made, for the cheap record every call keeps: eager device_puts,
    the specified in/out shardings of the student's jitted functions that reached Python, and
    eager shard_map in_specs. ``operand`` names the argument leaf placed (or a copy of it
    placed again); None for any other value."""
    owner = {id(value): path for path, value in leaves}
    found: list[Placement] = []
    for event in events:
        if event[0] == "device_put":
            _, xs, devices, placed = event
            for x, target, out in zip(xs, devices, placed):
                path = owner.get(id(x))
                if path is not None:
                    owner[id(out)] = path
                found.append({"via": "device_put", "operand": path, "sharding": describe(target)})
        elif event[0] == "jit":
            params, args, outs = event[1:4]
            for via, values, key in (("jit_in", args, "in_shardings"), ("jit_out", outs, "out_shardings")):
                for value, sharding in zip(values, params.get(key) or ()):
                    if type(sharding).__name__ not in ("UnspecifiedValue", "AUTO"):
                        found.append({"via": via, "operand": owner.get(id(concrete(value))),
                                      "sharding": describe(sharding)})
            found.extend(_inside(params["jaxpr"], describe, context_mesh(params)))
        elif event[0] == "shard_map":
            _, params, _, args, _ = event
            mesh, context = params.get("mesh"), context_mesh(params)
            for value, spec in zip(args, params.get("in_specs") or ()):
                found.append({"via": "shard_map_in", "operand": owner.get(id(concrete(value))),
                              "sharding": {**mesh_data(mesh, context), "type": "NamedSharding",
                                           "spec": simple_param(spec, describe)}})
    return found


def _inside(program: Any, describe: Describe, context: Any, depth: int = 0) -> list[Placement]:
    """The shard_map specs and jit shardings a jitted program applies inside it (not tied to an
    argument: ``operand`` None), for the cheap record of every call. ``context``: the concrete
    mesh it was traced under (``context_mesh``), for a shard_map written without a mesh."""
    found: list[Placement] = []
    jaxpr = getattr(program, "jaxpr", program)
    for eqn in getattr(jaxpr, "eqns", ()) if depth < 8 else ():
        params = eqn.params
        inner = context_mesh(params) or context
        if eqn.primitive.name == "shard_map" and params.get("mesh") is not None:
            found.extend({"via": "shard_map_in", "operand": None,
                          "sharding": {**mesh_data(params["mesh"], inner), "type": "NamedSharding",
                                       "spec": simple_param(spec, describe)}} for spec in params.get("in_specs") or ())
        elif eqn.primitive.name in ("jit", "pjit"):
            for via, key in (("jit_in", "in_shardings"), ("jit_out", "out_shardings")):
                found.extend({"via": via, "operand": None, "sharding": describe(s)} for s in params.get(key) or ()
                             if type(s).__name__ not in ("UnspecifiedValue", "AUTO"))
        for value in params.values():
            if hasattr(value, "eqns") or hasattr(getattr(value, "jaxpr", None), "eqns"):
                found.extend(_inside(value, describe, inner, depth + 1))
    return found


def buffers(array: Any) -> list[dict[str, Any]]:
    """Where an array's data really is: each device buffer's device and a digest of its bytes."""
    import numpy as np
    found = []
    for single in (array._arrays or [])[:64]:  # none once donated
        device = next(iter(single.devices()))
        data = np.ascontiguousarray(np.asarray(single))
        if data.dtype.name in WIDENED:  # digested as they travel (grader.child.server)
            data = data.astype(WIDENED[data.dtype.name])
        found.append({"device": int(device.id), "shape": list(data.shape),
                      "digest": hashlib.sha1(data.tobytes()).hexdigest()[:20]})
    return found


def concrete(value: Any) -> Any:
    """The array behind a transformation's tracer during a real call (``jax.grad`` computes the
    primal values eagerly, wrapped in tracers; an eager ``jax.vmap`` the batched ones): what the
    next operations really read."""
    for _ in range(16):
        inner = getattr(value, "val" if type(value).__name__ == "BatchTracer" else "primal", None)
        if inner is None or inner is value:
            return value
        value = inner
    return value


def is_staged(value: Any) -> bool:
    """A tracer with no value behind it: an operation on it is being staged, not run."""
    return type(concrete(value)).__name__ in ("DynamicJaxprTracer", "JaxprTracer")


# Where each kind of event keeps the values it read.
_READS = {"device_put": 1, "jit": 2, "primitive": 3, "shard_map": 3, "convert": 1, "assembled": 2}


def joined_argument(made: Any, pieces: list[Any], leaves: list[tuple[str, Any]]) -> Any:
    """The argument leaf an array assembled from ``pieces`` (``jax.make_array_from_callback``)
    is, cut into blocks and joined again: its pieces are JAX arrays (cut on the devices, not
    NumPy copies) and it holds the leaf's values, bit for bit. None where it is no argument."""
    import numpy as np
    if not pieces or not all(hasattr(p, "addressable_shards") for p in pieces):
        return None
    whole = np.asarray(made)
    for _, leaf in leaves:
        if getattr(leaf, "shape", None) == whole.shape and getattr(leaf, "dtype", None) == whole.dtype \
                and np.asarray(leaf).tobytes() == whole.tobytes():
            return leaf
    return None


def donated(events: list[tuple[Any, ...]]) -> set[int]:
    """The ids of the arrays the call donated, as the call and the executables said (an eager
    ``device_put(..., donate=True)``; the operands a jitted call's executable wrote an output
    into, read from it: ``grader.child.donation``): never asked of the arrays, since after a
    move between devices JAX 0.10 crashes on ``is_deleted()`` or a read of their shards."""
    gone = {id(x) for event in events if event[0] == "donated" for x in event[1]}
    gone.update(id(event[2][i]) for event in events if event[0] == "jit" and len(event) > 5
                for i in event[5][2])
    return gone


def held(array: Any, describe: Describe) -> dict[str, Any]:
    """An array's reported sharding (or why it cannot be read) and its real buffers."""
    try:
        sharding = describe(array.sharding)
    except Exception as error:  # a mesh rewritten after the array was made
        sharding = {"type": "unreadable", "error": f"{type(error).__name__}: {error}"}
    return {"sharding": sharding, "buffers": buffers(array)}


def program_of_call(events: list[tuple[Any, ...]], leaves: list[tuple[str, Any]], returned: list[tuple[str, Any]],
                    describe: Describe, is_array: Callable[[Any], bool],
                    replay: Callable[[list[tuple[Any, ...]], Any, list[tuple[str, Any]]], Any] | None = None
                    ) -> dict[str, Any]:
    """The program of a recorded call, in the traced program's terms (``program_of``), plus
    the real buffers of every array it placed and of every array it returned, and, for each
    argument leaf placed by an eager device_put, which returned leaves a ``replay`` of the
    call with other values placed changes (``follows``: by the placed value's node)."""
    builder = Builder(describe)
    ids: dict[int, int] = {}
    kept: list[Any] = []
    arrays: dict[str, dict[str, Any]] = {}
    # A float argument is an object the child made for this call, so where it goes it is that
    # argument (a learning rate traced into a jitted step); other Python numbers are constants
    # (Python shares small ints, and one literal's object between uses).
    arguments = {id(value) for _, value in leaves if type(value) is float}

    def value_id(value: Any) -> int:
        value = concrete(value)
        key = id(value)
        if type(value).__name__ == "TypedNdArray" and id(getattr(value, "base", None)) in arguments:
            key = id(value.base)  # JAX's typed view of a NumPy value made from a float argument
        if key not in ids or not (is_array(value) or key in arguments):
            ids[key] = builder.fresh(value)
            kept.append(value)
        return ids[key]

    def bind(values: Any, produced: list[int]) -> None:
        for value, new in zip(values, produced):
            value = concrete(value)
            ids[id(value)] = new
            kept.append(value)

    def literals(args: Any) -> dict[int, Any]:
        return {i: a for i, a in enumerate(args) if isinstance(a, (bool, int, float))}

    gone = donated(events)
    inputs = [value_id(value) for _, value in leaves]
    given = {id(concrete(value)) for _, value in leaves}
    replayed: list[tuple[int, Any]] = []  # (node, array) of each argument leaf placed eagerly, or
    # (node, Inside) of each value placed inside a jitted program the call ran
    for index, event in enumerate(events):
        kind = event[0]
        if kind not in _READS or any(is_staged(value) for value in event[_READS[kind]]):
            continue  # part of a transformation being traced (jax.grad's linear part): no values yet
        if kind == "convert":  # a float argument made a NumPy value: the same argument
            _, (number,), made = event
            if id(number) in arguments:
                arguments.add(id(made))
                ids[id(made)] = value_id(number)
                kept.append(made)
        elif kind == "device_put":
            _, xs, devices, placed = event
            produced = builder.equation("device_put", {"devices": tuple(devices)}, [value_id(x) for x in xs],
                                        list(placed), ())
            bind(placed, produced)
            for x, value, new in zip(xs, placed, produced):
                if is_array(value) and id(value) not in gone:  # a donated one's buffers are another array's now
                    arrays[str(new)] = held(value, describe)
                    if id(concrete(x)) in given and len(replayed) < MAX_REPLAYED:
                        replayed.append((new, value))
        elif kind == "assembled":  # the pieces joined into one value, placed as the array made of them
            _, via, pieces, sharding, made = event
            whole = joined_argument(made, pieces, leaves)
            joined = [value_id(whole)] if whole is not None else \
                builder.equation(via.removeprefix("jax."), {}, [value_id(p) for p in pieces], [made], ())
            produced = builder.equation("device_put", {"devices": (sharding,)}, joined, [made], ())
            bind([made], produced)
            if whole is not None:  # a placement of the argument, judged and replayed as one
                arrays[str(produced[0])] = held(made, describe)
                if len(replayed) < MAX_REPLAYED:
                    replayed.append((produced[0], made))
        elif kind == "jit":
            params, args, outs = event[1:4]
            known = set(builder.placed_inside)
            bind(outs, builder.equation("jit", params, [value_id(a) for a in args], list(outs), ()))
            for node, var in builder.placed_inside.items():
                if node not in known and len(replayed) < MAX_REPLAYED:
                    replayed.append((node, Inside(index, var)))
        elif kind == "primitive":
            _, primitive, params, args, out = event
            outs = list(out) if primitive.multiple_results else [out]
            bind(outs, builder.equation(primitive.name, params, [value_id(a) for a in args], outs, (),
                                        literals(args), args))
        elif kind == "shard_map":
            _, params, staged, args, out = event
            outs = list(out)
            jaxpr = getattr(staged, "jaxpr", None)
            eqns = getattr(jaxpr, "eqns", ())
            if len(eqns) == 1 and eqns[0].primitive.name == "shard_map":
                # The staged equation reads the call's arguments and any constants the body closes over.
                position = {var: i for i, var in enumerate(jaxpr.invars)}
                reads = [value_id(args[position[v]]) if not hasattr(v, "val") and v in position
                         else builder.fresh(v.aval) for v in eqns[0].invars]
                # the concrete mesh set in the context when it ran (route_eager), for one written without a mesh
                context = {"ctx_mesh": params["ctx_mesh"]} if "ctx_mesh" in params else {}
                bind(outs, builder.equation("shard_map", {**eqns[0].params, **context}, reads, outs, ()))
            else:  # the body could not be staged: its specs in, nothing known of the body
                unknown = {**{k: v for k, v in params.items() if k in ("mesh", "in_specs", "ctx_mesh")},
                           "unstaged": str(staged)}
                bind(outs, builder.equation("shard_map", unknown, [value_id(a) for a in args], outs, ()))
    outputs = [value_id(value) for _, value in returned]
    for (_, value), new in zip(returned, outputs):
        if is_array(value) and id(value) not in gone:
            arrays[str(new)] = held(value, describe)
    data = builder.data(inputs, outputs, [p for p, _ in leaves], [p for p, _ in returned])
    data["arrays"] = arrays
    if replay is not None:
        follows = {str(node): replay(events, value, returned) for node, value in replayed}
        data["follows"] = {node: changed for node, changed in follows.items() if changed is not None}
    return data
