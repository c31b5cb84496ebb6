"""The jit route (runs in the child): every call of a jitted function that reaches Python,
``jnp`` functions included (JAX's library functions are jitted too).

- ``pjit._infer_params``: what the call was made with (its function, static arguments), and
  for every program traced, the function it was traced from (``Ownership.traced_from``, which
  every route reads to name a program);
- ``pjit._run_python_pjit``: the call itself: its program, in_shardings and out_shardings,
  operands and results, whether it was traced, compiled or served from JAX's caches, and what
  its donation gave up (``grader.child.donation``): a ``jit`` event;
- ``pjit._pjit_call_impl_python``: every XLA program run outside JAX's C++ fast path, at any
  depth (in a full record): an ``executed`` event, read by ``compiled.programs``;
- ``pjit._get_fastpath_data``: while a call is recorded JAX's C++ dispatch never gets the data
  for its fast path, so every call of the student's jitted functions comes back to Python (a
  jitted step called N times in a loop is N events). In the cheap ``placements`` record JAX's
  own library functions keep their fast path; in a full record, so do JAX's own programs run
  inside an eager operation that move nothing between devices.
"""
from __future__ import annotations

from typing import Any

from grader.child import compiled
from grader.child.jax_version import run_python_pjit
from grader.child.jaxpr_graph import is_library, sub_programs
from grader.child.provenance import NOTHING
from grader.child.route_host import from_host_pusher, host_types
from grader.child.swap import interceptor

# Primitives that give a value a sharding (so a jitted program containing one places what it reads).
PLACING_PRIMITIVES = ("device_put", "sharding_constraint", "reshard", "shard_map")
_read_facts = compiled.facts  # for the hooks, in whose scope ``compiled`` is a counter


def install(recorder: Any, pjit: Any) -> list[tuple[Any, str, Any]]:
    """Put the route's hooks in place; returns them as (owner, attribute, hook) for ``intact``."""
    state, push, swap, full = recorder.state, recorder.events.append, recorder.swap, recorder.FULL
    run_pjit, call_impl = run_python_pjit(pjit), pjit._pjit_call_impl_python  # JAX 0.8: refused (jax_version)
    fastpath_data, infer_params = pjit._get_fastpath_data, pjit._infer_params
    donations, provenance = recorder.donations, recorder.provenance
    calling: list[Any] = [None, False]  # the program of the top-level call recorded whole, and whether it was untied
    placing = Placing()
    seen_programs: dict[int, bool] = {}  # id of every jitted program a recorded call ran -> JAX's own?
    kept: list[Any] = []  # those programs, alive (so an id is never reused)
    compiled, last_library = recorder.compiles, [False]
    inner_library: dict[int, bool] = {}  # id of a program run inside an eager operation -> JAX's own?
    quiet: dict[int, tuple[Any, bool]] = {}  # id of its executable -> (it, moves nothing between devices?)
    read_facts = _read_facts
    inferred = recorder.inferred  # the last jitted call's (params, function, jit info, args, kwargs)
    traced_from = recorder.ownership.traced_from
    intercepted = interceptor(swap, recorder.array_class, host_types()[0])
    from_host = from_host_pusher(push)

    def moves_nothing(executable: Any) -> bool:
        # Read during the call, for this decision only: what a record says XLA made of a
        # program is read after the call (``programs``), with the grader's patches restored
        if id(executable) not in quiet:
            read = read_facts(executable)
            quiet[id(executable)] = (executable, read is not None and not read["collectives"])
        return quiet[id(executable)][1]

    def observed_infer(fun: Any, info: Any, args: Any, kwargs: Any) -> Any:
        # What the call was made with (static arguments included): why a program was traced anew
        inferred_params = infer_params(fun, info, args, kwargs)
        program = inferred_params[0].params.get("jaxpr")
        if id(program) not in traced_from:  # whose program this is, for every route that compiles it
            traced_from[id(program)] = (program, fun, info)
        if state[0] is not None and not state[1]:
            inferred[0] = (inferred_params[0], fun, info, args, kwargs)
        return inferred_params

    def observed_pjit(p: Any, args_flat: Any, fun: Any, args: Any, kwargs: Any) -> Any:
        if state[0] != full and (state[0] is None or state[1]):
            return run_pjit(p, args_flat, fun, args, kwargs)
        if state[1]:  # inside an eager operation of a full record: whose program is this?
            program = p.params["jaxpr"]
            if id(program) not in inner_library:
                inner_library[id(program)] = is_library(program)
                kept.append(program)
            result = run_pjit(p, args_flat, fun, args, kwargs)
            last_library[0] = inner_library[id(program)]  # read next, by this call's fast-path question
            return result
        call = inferred[0] if inferred[0] is not None and inferred[0][0] is p else None
        inferred[0] = None
        state[1] += 1
        try:
            program = p.params["jaxpr"]
            traced = id(program) not in seen_programs
            if traced:  # JAX's own function, placing nothing (jax.jit(jnp.sum, in_shardings=...) places)
                seen_programs[id(program)] = is_library(program) and not any(
                    type(s).__name__ not in ("UnspecifiedValue", "AUTO")
                    for s in (*p.params.get("in_shardings", ()), *p.params.get("out_shardings", ())))
                kept.append(program)
            before = compiled[0]
            from_host(args_flat, f"jax.jit function {p.params.get('name')}")
            if swap[0] is not None:
                args_flat = intercepted(args_flat, placing.inputs(p.params, len(args_flat)))
            donated = p.params.get("donated_invars") or ()
            placed = donations.before(args_flat, donated) if any(donated) else None
            calling[:] = [program if state[0] == full else None, False]
            result = run_pjit(p, args_flat, fun, args, kwargs)
        finally:
            state[1] -= 1
            untied, calling[:] = calling[1], [None, False]
        if untied:  # another program made its outputs (grader.child.provenance): nothing of it is said
            last_library[0] = seen_programs[id(program)]
            return result
        status = "traced" if traced else ("compiled" if compiled[0] != before else "cached")
        # the program's parameters are its constants, then these operands
        reused, copied = donations.after(result[5], placed, len(result[7])) if placed else ((), ())
        push(("jit", p.params, args_flat, result[1], status, (call, compiled[0] - before, reused, copied),
              result[5] if state[0] == full else None))
        last_library[0] = seen_programs[id(program)]  # read next, by the same call's fast-path question
        return result

    def executed(*args: Any, **params: Any) -> Any:
        # Every XLA program run outside JAX's C++ fast path, at any depth: a jitted
        # function's, and those JAX runs for eager work (in a full record only JAX's own
        # collective-free programs inside an eager operation take that path, after a first run).
        # The submission's call recorded whole is tied to its program only where that program
        # made the outputs: its executable's way of running may have been swapped (issue #64).
        if state[0] != full or calling[0] is None or params.get("jaxpr") is not calling[0]:
            result = call_impl(*args, **params)
        else:
            with provenance.watch():
                result = call_impl(*args, **params)
                producer = provenance.producer(result[0], args)
            own = provenance.loaded(result[1])
            if producer is not NOTHING and (producer is None or producer is not own):
                calling[1] = True
                return result
        if state[0] == full and result[1] is not None:
            push(("executed", params.get("name"), result[1]))
        return result

    def no_fastpath_while_recording(executable: Any, *args: Any, **kwargs: Any) -> Any:
        # Without these data JAX's C++ dispatch caches nothing, so the next call of the same
        # function with the same shapes comes back to Python, and to the recorder: in a
        # full record every call the submission makes, and every program that communicates
        # (its runs are its traffic); for the student's own jitted functions in every call.
        # JAX's library (jnp.sum is a jitted function) keeps its fast path in the cheap
        # record, where it places nothing and ~70 us a call would add up over every value
        # check; in a full record so do JAX's own programs run inside an eager operation
        # that move nothing (x[:n] in a Python loop: the operation itself is seen each time;
        # a student's function called there, from a host callback, never keeps it).
        mode, depth = state
        if mode == full and not (depth and last_library[0] and moves_nothing(executable)):
            return None
        if mode is not None and not depth and not last_library[0]:
            return None
        return fastpath_data(executable, *args, **kwargs)

    pjit._run_python_pjit = observed_pjit
    pjit._get_fastpath_data = no_fastpath_while_recording
    pjit._pjit_call_impl_python = executed
    pjit._infer_params = observed_infer
    return [(pjit, "_run_python_pjit", observed_pjit), (pjit, "_get_fastpath_data", no_fastpath_while_recording),
            (pjit, "_pjit_call_impl_python", executed), (pjit, "_infer_params", observed_infer)]


class Placing:
    """Which operands of a jitted call it places, by program (worked out once for each)."""

    def __init__(self) -> None:
        self.known: dict[int, tuple[Any, frozenset[int]]] = {}  # id(program) -> (program, inputs it places)

    def inputs(self, params: dict[str, Any], count: int) -> frozenset[int]:
        """The positions of a jitted call's operands it places: a specified in_sharding, or a
        placement inside its program of the operand or of a value computed from it."""
        program = params["jaxpr"]
        if id(program) not in self.known:
            inner = _placed_invars(program)
            shardings = params.get("in_shardings") or ()
            given = {i for i, s in enumerate(shardings) if type(s).__name__ not in ("UnspecifiedValue", "AUTO")}
            self.known[id(program)] = (program, frozenset(given | inner))
        return frozenset(i for i in self.known[id(program)][1] if i < count)


def _placed_invars(program: Any) -> frozenset[int]:
    """Which inputs of a program it places: read by a placing primitive (or a nested program
    that places them), directly or through values computed from them."""
    jaxpr = getattr(program, "jaxpr", program)
    needed: set[Any] = set()  # variables whose value (or a value computed from it) gets placed
    for eqn in reversed(getattr(jaxpr, "eqns", ())):
        name = eqn.primitive.name
        if name in PLACING_PRIMITIVES or any(o in needed for o in eqn.outvars if not hasattr(o, "val")):
            positions: Any = range(len(eqn.invars))
        elif name in ("jit", "pjit", "closed_call", "core_call"):
            inner = eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr")
            shardings = eqn.params.get("in_shardings") or ()
            positions = set(_placed_invars(inner)) | {i for i, s in enumerate(shardings)
                                                      if type(s).__name__ not in ("UnspecifiedValue", "AUTO")}
        elif any(_places(sub) for sub in sub_programs(eqn.params)):
            positions = range(len(eqn.invars))
        else:
            continue
        needed.update(eqn.invars[i] for i in positions if i < len(eqn.invars) and not hasattr(eqn.invars[i], "val"))
    return frozenset(i for i, v in enumerate(getattr(jaxpr, "invars", ())) if v in needed)


def _places(program: Any) -> bool:
    jaxpr = getattr(program, "jaxpr", program)
    return any(e.primitive.name in PLACING_PRIMITIVES or any(_places(s) for s in sub_programs(e.params))
               for e in getattr(jaxpr, "eqns", ()))
