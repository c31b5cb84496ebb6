"""The ahead-of-time route: ``jax.jit(f).lower(...).compile()`` and every call of what it
returns (runs in the child).

An executable compiled ahead of time never passes through ``pjit._run_python_pjit``, where the
recorder meets a jitted function's calls: its trace and lowering happen at ``.lower()``, its
compilation at ``.compile()``, and its calls go through ``stages.Compiled.call`` (after the
first, through JAX's C++ fast path for compiled executables, which no Python hook sees). So a
step compiled once and kept looked like no jitted function at all, and a new function
compiled ahead of time on every call looked like no compilation.

The hooks here make the route look like the other to every check:

- ``Traced.lower`` and ``Lowered.compile`` remember, for each executable, the program it was
  lowered from (the jitted function's params: its jaxpr, name, donated and sharded operands),
  the call that traced it when the submission traced it during a recorded call, and how many
  programs XLA compiled for it during which record;
- ``MeshExecutable.create_cpp_call`` answers None, so JAX never builds the fast path and every
  call of a compiled executable reaches ``Compiled.call`` (a few microseconds a call);
- ``Compiled.call`` pushes, for a call the submission makes during a record, the same ``jit``
  event a jitted function's call pushes (traced when the executable was made during this
  record, and the compilations that made it; cached otherwise) and, in a full record, the
  ``executed`` event of its XLA program. In a counterfactual call the operands the program
  places (its in_shardings, or a placement inside it) are captured or fed as a jitted call's
  are (``grader.child.swap``);
- ``grader.child.provenance`` says which XLA executable made the outputs a call returned. The
  events name that one's program: a compiled object's way of running (its ``_unsafe_call``,
  its ``xla_executable``) can be swapped for another's, and then the call did what the other
  program does (issue #64: the program lowered with the asked-for shardings named, one
  gathering the weights run, or both run and the other's outputs returned). A call whose
  outputs no one program compiled here made is tied to none.

Like the recorder's other hooks these only keep raw references during the call; everything is
described after it, with the grader's patches restored.
"""
from __future__ import annotations

from typing import Any

from jax import tree_util

from grader.child.provenance import NOTHING
from grader.child.route_host import host_types
from grader.child.route_jit import Placing
from grader.child.swap import interceptor


def install(recorder: Any, stages: Any, pxla: Any) -> list[tuple[Any, str, Any]]:
    """Put the route's hooks in place; returns them as (owner, attribute, hook) for ``intact``."""
    state, push, compiles, records, inferred = (recorder.state, recorder.events.append, recorder.compiles,
                                                recorder.records, recorder.inferred)
    lower, compile_, call = stages.Traced.lower, stages.Lowered.compile, stages.Compiled.call
    array_class, donations = recorder.array_class, recorder.donations
    lowered_from: dict[int, tuple[Any, dict[str, Any], Any]] = {}  # id(Lowered) -> (it, params, call)
    made: dict[int, tuple[Any, dict[str, Any], Any, int, int | None]] = {}  # id(executable) -> how it was made
    provenance = recorder.provenance
    run_in: dict[int, int] = {}  # id(executable) -> the record that last ran it
    full = recorder.FULL
    placing, intercepted = Placing(), interceptor(recorder.swap, array_class, host_types()[0])
    tree_flatten, tree_unflatten = tree_util.tree_flatten, tree_util.tree_unflatten
    swap = recorder.swap

    def fed(params: dict[str, Any], compiled_params: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # the operands the program places, as a jitted call's (its constants come first in its program)
        flat, tree = tree_flatten((args, kwargs))
        constants = len(compiled_params.const_args)
        positions = {i - constants for i in placing.inputs(params, constants + len(flat)) if i >= constants}
        return tree_unflatten(tree, intercepted(flat, positions))

    def observed_lower(traced: Any, *args: Any, **kwargs: Any) -> Any:
        lowered = lower(traced, *args, **kwargs)
        params = traced._params
        # the submission's own .lower() during a record: the trace that made it (its function, static arguments)
        traced_by = inferred[0] if inferred[0] is not None and inferred[0][0].params is params else None
        lowered_from[id(lowered)] = (lowered, params, traced_by)
        return lowered

    def observed_compile(lowered: Any, *args: Any, **kwargs: Any) -> Any:
        before = compiles[0]
        result = compile_(lowered, *args, **kwargs)
        source = lowered_from.pop(id(lowered), None)
        executable = getattr(result, "_executable", None)
        if source is not None and executable is not None:
            made[id(executable)] = (executable, source[1], source[2], compiles[0] - before,
                                    records[0] if state[0] is not None else None)
        return result

    def what_ran(called: Any, producer: Any) -> Any:
        # The executable whose XLA program made the call's outputs (grader.child.provenance): the
        # one called, unless its way of running was swapped (its _unsafe_call, its xla_executable)
        # for another's compiled here, whose program is then what the call did. None where no one
        # program made them all, or one not compiled here: nothing of the call can then be tied
        # to a program. (Two compilations JAX served the same XLA executable are the same
        # program, and the one called is named.)
        if producer is NOTHING or (producer is not None and provenance.loaded(called) is producer):
            return called
        others = provenance.made_with(producer) if producer is not None else []
        return next((other for other in others if id(other) in made and made[id(other)][0] is other), None)

    def observed_call(*args: Any, **kwargs: Any) -> Any:
        if state[0] is None or state[1] or not args:
            return call(*args, **kwargs)
        executable = args[0].executable
        how = made.get(id(executable))
        state[1] += 1  # what runs inside (a captured operand's copy included) is not the submission's
        try:
            if how is not None and swap[0] is not None:
                given, kwargs = fed(how[1], args[0], args[1:], kwargs)
                args = (args[0], *given)
            # what a donated operand was, read before the call gives it up (grader.child.donation)
            donated = how[1].get("donated_invars") or () if how is not None else ()
            placed = donations.before((*args[0].const_args, *tree_flatten((args[1:], kwargs))[0]), donated,
                                      len(args[0].const_args)) if any(donated) else None
            with provenance.watch():
                result = call(*args, **kwargs)
                producer = provenance.producer(result[1], result[2])
        finally:
            state[1] -= 1
        executable = what_ran(executable, producer) if how is not None else None
        how = made.get(id(executable))
        if how is None:  # compiled by a route the grader does not know: run, but nothing to say of it
            return result
        _, params, traced_by, compiled, record = how
        first = run_in.get(id(executable)) != records[0]
        run_in[id(executable)] = records[0]
        status = "traced" if first and record == records[0] else "cached"
        operands = (*args[0].const_args, *result[2])
        reused, copied = donations.after(executable, placed) if placed else ((), ())
        # in a full record, the executable too: what XLA made of it is the submission's program
        # (its memory, its collectives), whichever route compiled it
        push(("jit", params, operands, result[1], status,
              (traced_by, compiled if status == "traced" else 0, reused, copied), executable if state[0] == full else None))
        if state[0] == full:
            push(("executed", params.get("name"), executable))
        return result

    def no_fast_path(executable: Any, params: Any) -> None:
        return None

    stages.Traced.lower = observed_lower
    stages.Lowered.compile = observed_compile
    stages.Compiled.call = staticmethod(observed_call)
    pxla.MeshExecutable.create_cpp_call = no_fast_path
    return [(stages.Traced, "lower", observed_lower), (stages.Lowered, "compile", observed_compile),
            (stages.Compiled, "call", observed_call), (pxla.MeshExecutable, "create_cpp_call", no_fast_path)]
