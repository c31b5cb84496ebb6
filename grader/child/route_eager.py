"""The eager route (runs in the child): JAX operations a call runs one by one, outside any
jitted function.

- ``dispatch._batched_device_put_impl``: every eager ``jax.device_put``;
- ``EvalTrace.process_primitive``: every other primitive applied eagerly (a sharding
  constraint outside jit, a bare ``lax`` operation, a host callback);
- ``jax.make_array_from_callback`` and ``jax.make_array_from_single_device_arrays``: an array
  assembled during the call from pieces, one a device (an ``assembled`` event: the pieces, the
  sharding, the array), which is a placement of what the pieces were cut from;
- ``EvalTrace.process_shard_map``: every eager ``shard_map``; its body is also staged to a
  program, so its specs and collectives are known, and the concrete mesh set in the context
  (``jax.set_mesh``) is kept with it as ``ctx_mesh``: one written without ``mesh=`` runs there.

Each pushes a ``device_put``, ``primitive``, ``assembled`` or ``shard_map`` event with the
objects it read and made; what JAX runs inside them is not the submission's (the recorder's
depth counter). The programs JAX compiles to run them are seen by the jit route (``executed``)
and the compile route, and read as JAX's own. What a ``device_put(..., donate=True)`` gave up
is a ``donated`` event (and a weak reference in ``Recorder.donated``), as the call said it:
never asked of the array, which JAX 0.10 cannot answer after a move between devices.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable

from grader.child.jaxpr_graph import context_mesh
from grader.child.callbacks import HOST_PRIMITIVES
from grader.child.route_host import from_host_pusher, host_types
from grader.child.swap import interceptor


def install(recorder: Any, core: Any, dispatch: Any, make_jaxpr: Callable[..., Any], array_module: Any,
            jax_module: Any) -> list[tuple[Any, str, Any]]:
    """Put the route's hooks in place; returns them as (owner, attribute, hook) for ``intact``."""
    state, push, swap, full = recorder.state, recorder.events.append, recorder.swap, recorder.FULL
    eager_put = dispatch._batched_device_put_impl
    process_primitive, process_shard_map = core.EvalTrace.process_primitive, core.EvalTrace.process_shard_map
    intercepted = interceptor(swap, recorder.array_class, host_types()[0])
    from_host = from_host_pusher(push)

    def stage(prim: Any, fun: Any, args: Any, params: dict[str, Any]) -> Any:
        """The eager shard_map's body as a program (its out_specs and collectives), or why not."""
        try:
            return make_jaxpr(lambda *a: tuple(prim.bind(*a, subfuns=(fun,), **params)))(*args)
        except Exception as error:  # an untraceable body: the call itself still runs eagerly
            return f"{type(error).__name__}: {str(error)[:300]}"

    def observed_put(*xs: Any, devices: Any, **kwargs: Any) -> Any:
        donated = [x for x, how in zip(xs, kwargs.get("copy_semantics") or ())
                   if getattr(how, "name", "") == "DONATE_INPUT"] if not state[1] else []
        recorder.donated.extend(weakref.ref(x) for x in donated if type(x) is recorder.array_class)
        if state[0] is None or state[1]:
            return eager_put(*xs, devices=devices, **kwargs)
        state[1] += 1
        try:
            from_host(xs, "jax.device_put")
            if swap[0] is not None:  # only the placement judged: its sharding, shape and turn
                xs = intercepted(xs, [i for i, (x, d) in enumerate(zip(xs, devices)) if swap[0].judged(x, d)])
            placed = eager_put(*xs, devices=devices, **kwargs)
        finally:
            state[1] -= 1
        push(("device_put", xs, devices, placed))
        if donated:  # gone once moved: JAX 0.10 crashes reading one moved to other devices (is_deleted, shards)
            push(("donated", donated))
        return placed

    def observed_primitive(trace: Any, primitive: Any, args: Any, params: Any) -> Any:
        if state[0] is None or state[1]:
            return process_primitive(trace, primitive, args, params)
        state[1] += 1  # in every mode: what JAX runs inside (a constraint's own jit) is not the submission's
        try:
            from_host(args, f"jax.lax.{primitive.name}")
            if swap[0] is not None and primitive.name == "sharding_constraint":
                args = intercepted(args)
            out = process_primitive(trace, primitive, args, params)
        finally:
            state[1] -= 1
        if state[0] == full or primitive.name in HOST_PRIMITIVES:
            push(("primitive", primitive, params, args, out))
        return out

    def observed_shard_map(trace: Any, prim: Any, fun: Any, args: Any, **params: Any) -> Any:
        if state[0] is None or state[1]:
            return process_shard_map(trace, prim, fun, args, **params)
        state[1] += 1
        try:
            from_host(args, "jax.shard_map")
            if swap[0] is not None:
                args = intercepted(args)
            staged = stage(prim, fun, args, params) if state[0] == full else None
            out = process_shard_map(trace, prim, fun, args, **params)
        finally:
            state[1] -= 1
        context = context_mesh()
        push(("shard_map", {**params, "ctx_mesh": context} if context is not None else params, staged, args, out))
        return out

    def observed_assembly(make: Callable[..., Any], via: str) -> Callable[..., Any]:
        # An array built from its pieces, one a device, during the call: a placement of what
        # the pieces were cut from (jax.make_array_from_callback from slices of w)
        def assembled(shape: Any, sharding: Any, pieces: Any, *args: Any, **kwargs: Any) -> Any:
            if state[0] is None or state[1]:
                return make(shape, sharding, pieces, *args, **kwargs)
            given: list[Any] = []
            if callable(pieces):  # make_array_from_callback: its data_callback gives the pieces
                cut = pieces

                def pieces(index: Any) -> Any:
                    given.append(cut(index))
                    return given[-1]
            else:
                given = list(pieces)
            out = make(shape, sharding, pieces, *args, **kwargs)
            from_host(given, via)
            if swap[0] is not None and swap[0].judged(out, sharding):  # placing: fed as a device_put is
                fed = intercepted([out])[0]
                if fed is not out:
                    state[1] += 1
                    try:
                        out = jax_module.device_put(fed, sharding)
                    finally:
                        state[1] -= 1
            push(("assembled", via, given, sharding, out))
            return out
        assembled.__name__, assembled.__doc__, assembled.__wrapped__ = make.__name__, make.__doc__, make
        return assembled

    hooks: list[tuple[Any, str, Any]] = []
    for name in ("make_array_from_callback", "make_array_from_single_device_arrays"):
        hook = observed_assembly(getattr(array_module, name), f"jax.{name}")
        for owner in (array_module, jax_module):
            setattr(owner, name, hook)
            hooks.append((owner, name, hook))
    dispatch._batched_device_put_impl = observed_put
    core.EvalTrace.process_primitive = observed_primitive
    core.EvalTrace.process_shard_map = observed_shard_map
    return [*hooks, (dispatch, "_batched_device_put_impl", observed_put),
            (core.EvalTrace, "process_primitive", observed_primitive),
            (core.EvalTrace, "process_shard_map", observed_shard_map)]
