"""What a real call did, as a program (runs in the child).

Tracing (``jax.make_jaxpr``) shows what a function *would* do; this records what a call
really *did*, so that code which cannot be traced (it prints ``out.sharding``, reads
``addressable_shards``, calls ``block_until_ready``) is judged as precisely as code that can,
and so that code which behaves differently when traced is caught. Four hooks sit on JAX's
eager paths, in place before the submission is imported:

- ``dispatch._batched_device_put_impl``: every eager ``jax.device_put``;
- ``pjit._run_python_pjit``: every call of a jitted function that reaches Python (its inner
  program, in_shardings and out_shardings), ``jnp`` functions included. Before a call recorded
  in full, and once after the submission is imported, the C++ dispatch caches are cleared, so
  no jitted call slips past on the fast path (afterwards, a shape's first call always misses);
- ``EvalTrace.process_primitive``: every other primitive applied eagerly (a sharding
  constraint outside jit, a bare ``lax`` operation);
- ``EvalTrace.process_shard_map``: every eager ``shard_map``; its body is also staged to a
  program, so its specs and collectives are known.

Every call records its placements (``placements`` mode: eager device_put, the in/out
shardings of each jitted function that reached Python, eager shard_map specs), so the calls
of the value checks can be compared with the probe call; the probe call records everything
(``full``). Only operations the submission itself performs count (a ``depth`` counter skips what JAX
does inside them). During the call the hooks only append raw references to a list, using
builtins captured when they were made, so a submission that swaps builtins or JAX functions
during its call cannot change what was recorded, only stop recording; everything is
described after the call, once the grader's patches are restored. Values are identified by
the objects themselves (all kept alive until the program is built), so the program's
dataflow is exact: the result derives from a placed array only if it was computed from it.
"""
from __future__ import annotations

import hashlib
from typing import Any, Callable

from grader.observe.jaxpr_graph import Builder, Describe, mesh_data, simple_param

FULL, PLACEMENTS = "full", "placements"


class Recorder:
    """Records the submission's eager JAX operations while ``mode`` is set."""

    def __init__(self, core: Any, dispatch: Any, pjit: Any, make_jaxpr: Callable[..., Any]) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.state = [None, 0]  # [mode, depth]
        self._make_jaxpr = make_jaxpr
        self._caches = (pjit._cpp_pjit_cache_fun_only, pjit._cpp_pjit_cache_explicit_attributes)
        self._install(core, dispatch, pjit)

    # -- the hooks: raw references only, builtins captured now ----------------------------------
    def _install(self, core: Any, dispatch: Any, pjit: Any) -> None:
        state, push = self.state, self.events.append
        eager_put, run_pjit = dispatch._batched_device_put_impl, pjit._run_python_pjit
        process_primitive, process_shard_map = core.EvalTrace.process_primitive, core.EvalTrace.process_shard_map
        stage = self._stage_shard_map

        def observed_put(*xs: Any, devices: Any, **kwargs: Any) -> Any:
            if state[0] is None or state[1]:
                return eager_put(*xs, devices=devices, **kwargs)
            state[1] += 1
            try:
                placed = eager_put(*xs, devices=devices, **kwargs)
            finally:
                state[1] -= 1
            push(("device_put", xs, devices, placed))
            return placed

        def observed_pjit(p: Any, args_flat: Any, fun: Any, args: Any, kwargs: Any) -> Any:
            if state[0] is None or state[1]:
                return run_pjit(p, args_flat, fun, args, kwargs)
            state[1] += 1
            try:
                result = run_pjit(p, args_flat, fun, args, kwargs)
            finally:
                state[1] -= 1
            push(("jit", p.params, args_flat, result[1]))
            return result

        def observed_primitive(trace: Any, primitive: Any, args: Any, params: Any) -> Any:
            if state[0] is None or state[1]:
                return process_primitive(trace, primitive, args, params)
            state[1] += 1  # in every mode: what JAX runs inside (a constraint's own jit) is not the submission's
            try:
                out = process_primitive(trace, primitive, args, params)
            finally:
                state[1] -= 1
            if state[0] == FULL:
                push(("primitive", primitive, params, args, out))
            return out

        def observed_shard_map(trace: Any, prim: Any, fun: Any, args: Any, **params: Any) -> Any:
            if state[0] is None or state[1]:
                return process_shard_map(trace, prim, fun, args, **params)
            state[1] += 1
            try:
                staged = stage(prim, fun, args, params) if state[0] == FULL else None
                out = process_shard_map(trace, prim, fun, args, **params)
            finally:
                state[1] -= 1
            push(("shard_map", params, staged, args, out))
            return out

        dispatch._batched_device_put_impl = observed_put
        pjit._run_python_pjit = observed_pjit
        core.EvalTrace.process_primitive = observed_primitive
        core.EvalTrace.process_shard_map = observed_shard_map
        self.hooks = ((dispatch, "_batched_device_put_impl", observed_put), (pjit, "_run_python_pjit", observed_pjit),
                      (core.EvalTrace, "process_primitive", observed_primitive),
                      (core.EvalTrace, "process_shard_map", observed_shard_map))

    def _stage_shard_map(self, prim: Any, fun: Any, args: Any, params: dict[str, Any]) -> Any:
        """The eager shard_map's body as a program (its out_specs and collectives), or why not."""
        try:
            return self._make_jaxpr(lambda *a: tuple(prim.bind(*a, subfuns=(fun,), **params)))(*args)
        except Exception as error:  # an untraceable body: the call itself still runs eagerly
            return f"{type(error).__name__}: {str(error)[:300]}"

    # -- a recorded call --------------------------------------------------------------------------
    def clear_caches(self) -> None:
        """Make the next call of every jitted function reach Python (and so the recorder)."""
        for cache in self._caches:
            cache.clear()

    def start(self, mode: str) -> None:
        self.events.clear()
        if mode == FULL:
            self.clear_caches()
        self.state[0], self.state[1] = mode, 0

    def stop(self) -> list[tuple[Any, ...]]:
        self.state[0] = None
        events = list(self.events)
        self.events.clear()
        return events

    def intact(self) -> bool:
        """Whether every hook is still the one installed (checked after a call, before restoring)."""
        return all(getattr(owner, name) is hook for owner, name, hook in self.hooks)


def placements_of(events: list[tuple[Any, ...]], leaves: list[tuple[str, Any]], describe: Describe) -> list[dict[str, Any]]:
    """The placements a call made, for the cheap record every call keeps: eager device_puts,
    the specified in/out shardings of the student's jitted functions that reached Python, and
    eager shard_map in_specs. ``operand`` names the argument leaf placed (or a copy of it
    placed again); None for any other value."""
    owner = {id(value): path for path, value in leaves}
    found = []
    for event in events:
        if event[0] == "device_put":
            _, xs, devices, placed = event
            for x, target, out in zip(xs, devices, placed):
                path = owner.get(id(x))
                if path is not None:
                    owner[id(out)] = path
                found.append({"via": "device_put", "operand": path, "sharding": describe(target)})
        elif event[0] == "jit":
            _, params, args, outs = event
            for via, values, key in (("jit_in", args, "in_shardings"), ("jit_out", outs, "out_shardings")):
                for value, sharding in zip(values, params.get(key) or ()):
                    if type(sharding).__name__ not in ("UnspecifiedValue", "AUTO"):
                        found.append({"via": via, "operand": owner.get(id(concrete(value))),
                                      "sharding": describe(sharding)})
            found.extend(_inside(params["jaxpr"], describe))
        elif event[0] == "shard_map":
            _, params, _, args, _ = event
            mesh = params.get("mesh")
            for value, spec in zip(args, params.get("in_specs") or ()):
                found.append({"via": "shard_map_in", "operand": owner.get(id(concrete(value))),
                              "sharding": {**mesh_data(mesh), "type": "NamedSharding",
                                           "spec": simple_param(spec, describe)}})
    return found


def _inside(program: Any, describe: Describe, depth: int = 0) -> list[dict[str, Any]]:
    """The shard_map specs and jit shardings a jitted program applies inside it (not tied to an
    argument: ``operand`` None), for the cheap record of every call."""
    found: list[dict[str, Any]] = []
    jaxpr = getattr(program, "jaxpr", program)
    for eqn in getattr(jaxpr, "eqns", ()) if depth < 8 else ():
        params = eqn.params
        if eqn.primitive.name == "shard_map" and params.get("mesh") is not None:
            found.extend({"via": "shard_map_in", "operand": None,
                          "sharding": {**mesh_data(params["mesh"]), "type": "NamedSharding",
                                       "spec": simple_param(spec, describe)}} for spec in params.get("in_specs") or ())
        elif eqn.primitive.name in ("jit", "pjit"):
            for via, key in (("jit_in", "in_shardings"), ("jit_out", "out_shardings")):
                found.extend({"via": via, "operand": None, "sharding": describe(s)} for s in params.get(key) or ()
                             if type(s).__name__ not in ("UnspecifiedValue", "AUTO"))
        for value in params.values():
            if hasattr(value, "eqns") or hasattr(getattr(value, "jaxpr", None), "eqns"):
                found.extend(_inside(value, describe, depth + 1))
    return found


def buffers(array: Any) -> list[dict[str, Any]]:
    """Where an array's data really is: each device buffer's device and a digest of its bytes."""
    import numpy as np
    found = []
    for single in array._arrays[:64]:
        device = next(iter(single.devices()))
        data = np.ascontiguousarray(np.asarray(single))
        found.append({"device": int(device.id), "shape": list(data.shape),
                      "digest": hashlib.sha1(data.tobytes()).hexdigest()[:20]})
    return found


def concrete(value: Any) -> Any:
    """The array behind a transformation's tracer during a real call (``jax.grad`` computes the
    primal values eagerly, wrapped in tracers): what the next operations really read."""
    for _ in range(16):
        inner = getattr(value, "primal", None)
        if inner is None or inner is value:
            return value
        value = inner
    return value


def is_staged(value: Any) -> bool:
    """A tracer with no value behind it: an operation on it is being staged, not run."""
    return type(concrete(value)).__name__ in ("DynamicJaxprTracer", "JaxprTracer")


# Where each kind of event keeps the values it read.
_READS = {"device_put": 1, "jit": 2, "primitive": 3, "shard_map": 3}


def held(array: Any, describe: Describe) -> dict[str, Any]:
    """An array's reported sharding (or why it cannot be read) and its real buffers."""
    try:
        sharding = describe(array.sharding)
    except Exception as error:  # a mesh rewritten after the array was made
        sharding = {"type": "unreadable", "error": f"{type(error).__name__}: {error}"}
    return {"sharding": sharding, "buffers": buffers(array)}


def program_of_call(events: list[tuple[Any, ...]], leaves: list[tuple[str, Any]], returned: list[tuple[str, Any]],
                    describe: Describe, is_array: Callable[[Any], bool]) -> dict[str, Any]:
    """The program of a recorded call, in the traced program's terms (``program_of``), plus
    the real buffers of every array it placed and of every array it returned."""
    builder = Builder(describe)
    ids: dict[int, int] = {}
    kept: list[Any] = []
    arrays: dict[str, dict[str, Any]] = {}

    def value_id(value: Any) -> int:
        value = concrete(value)
        key = id(value)
        if key not in ids or not is_array(value):
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

    inputs = [value_id(value) for _, value in leaves]
    for event in events:
        kind = event[0]
        if any(is_staged(value) for value in event[_READS[kind]]):
            continue  # part of a transformation being traced (jax.grad's linear part): no values yet
        if kind == "device_put":
            _, xs, devices, placed = event
            produced = builder.equation("device_put", {"devices": tuple(devices)}, [value_id(x) for x in xs],
                                        list(placed), ())
            bind(placed, produced)
            for value, new in zip(placed, produced):
                if is_array(value):
                    arrays[str(new)] = held(value, describe)
        elif kind == "jit":
            _, params, args, outs = event
            bind(outs, builder.equation("jit", params, [value_id(a) for a in args], list(outs), ()))
        elif kind == "primitive":
            _, primitive, params, args, out = event
            outs = list(out) if primitive.multiple_results else [out]
            bind(outs, builder.equation(primitive.name, params, [value_id(a) for a in args], outs, (),
                                        literals(args)))
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
                bind(outs, builder.equation("shard_map", eqns[0].params, reads, outs, ()))
            else:  # the body could not be staged: its specs in, nothing known of the body
                unknown = {**{k: v for k, v in params.items() if k in ("mesh", "in_specs")},
                           "unstaged": str(staged)}
                bind(outs, builder.equation("shard_map", unknown, [value_id(a) for a in args], outs, ()))
    outputs = [value_id(value) for _, value in returned]
    for (_, value), new in zip(returned, outputs):
        if is_array(value):
            arrays[str(new)] = held(value, describe)
    data = builder.data(inputs, outputs, [p for p, _ in leaves], [p for p, _ in returned])
    data["arrays"] = arrays
    return data
