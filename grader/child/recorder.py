"""What a real call did, as a program (runs in the child).

Tracing (``jax.make_jaxpr``) shows what a function *would* do; this records what a call
really *did*, so that code which cannot be traced (it prints ``out.sharding``, reads
``addressable_shards``, calls ``block_until_ready``) is judged as precisely as code that can,
and so that code which behaves differently when traced is caught. Hooks sit on JAX's
eager paths, in place before the submission is imported:

- ``dispatch._batched_device_put_impl``: every eager ``jax.device_put``;
- ``pjit._run_python_pjit``: every call of a jitted function (its inner program, in_shardings
  and out_shardings, and whether it was traced, compiled or served from JAX's caches), ``jnp``
  functions included. While a call is recorded JAX's C++ dispatch never gets the data for
  its fast path (``pjit._get_fastpath_data``), and the caches are cleared once the
  submission is imported and before and after a full record, so every call reaches Python:
  a jitted step called N times in a loop is N events (in the cheap ``placements`` record,
  JAX's own library functions keep their fast path; in a full record, so do JAX's own
  programs run inside an eager operation that move nothing between devices);
- ``EvalTrace.process_primitive``: every other primitive applied eagerly (a sharding
  constraint outside jit, a bare ``lax`` operation, a host callback);
- ``EvalTrace.process_shard_map``: every eager ``shard_map``; its body is also staged to a
  program, so its specs and collectives are known;
- ``ArrayImpl._value`` and NumPy's ``asarray``/``array``/``asanyarray``/``ascontiguousarray``
  (NumPy reads CPU arrays through the buffer protocol, which no Python hook sees):
  a JAX array pulled to the host (``np.asarray``, ``float()``, ``.item()``, ``print``);
  ``custom_vjp.__call__`` and ``custom_jvp.__call__``: a custom derivative rule applied;
  ``compiler.compile_or_get_cached``: a program compiled. In a full record every XLA program
  the call ran is kept (JAX's own too) for what XLA made of it (``grader.child.compiled``).

Counterfactual calls (``Recorder.swap``, a :class:`Swap`): a *capturing* call (the function
on other values of one argument) keeps what each placing operation received (an eager
device_put onto the sharding judged, a sharding constraint or shard_map, a jitted function at
the operands it places); a *feeding* call (the function on the original arguments) hands the
same operations, in the same order, those captured values instead. A result computed from the
placed values then equals the capturing call's; one computed from the originals (``0 *`` the
placed array, NumPy on the original) does not. Moving the original x onto another sharding
is not fed: it is not moving the placed x.

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
import os
from typing import Any, Callable

from grader.child import compiled
from grader.child.jaxpr_graph import Builder, Describe, is_library, mesh_data, simple_param
from grader.wire import (WIDENED, CompilationData, CompiledFacts, HostData, JitCallData, Placement, ProgramData,
                         RecompiledData)

FULL, PLACEMENTS = "full", "placements"
_read_facts = compiled.facts  # for the hooks, in whose scope ``compiled`` is a counter
# Primitives that run Python on the host in the middle of a program.
HOST_PRIMITIVES = {"pure_callback": "jax.pure_callback", "io_callback": "jax.experimental.io_callback",
                   "debug_callback": "jax.debug.callback"}
# Primitives that give a value a sharding (so a jitted program containing one places what it reads).
PLACING_PRIMITIVES = ("device_put", "sharding_constraint", "shard_map")
MAX_JIT_CALLS = 256  # of one call's record: more say nothing new
MAX_PROGRAMS = 64  # distinct XLA programs of one call's record


class Recorder:
    """Records the submission's eager JAX operations while ``mode`` is set."""

    def __init__(self, core: Any, dispatch: Any, pjit: Any, make_jaxpr: Callable[..., Any], compiler: Any,
                 array_class: Any, custom_rules: tuple[Any, ...], numpy: Any) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.state = [None, 0]  # [mode, depth]
        self.swap: list[Swap | None] = [None]  # during a capturing or feeding call
        self.Swap = Swap  # for the child, which imports nothing from the grader after the fork
        self._make_jaxpr = make_jaxpr
        self._caches = (pjit._cpp_pjit_cache_fun_only, pjit._cpp_pjit_cache_explicit_attributes)
        self._placing: dict[int, tuple[Any, frozenset[int]]] = {}  # id(program) -> (program, inputs it places)
        self._host: dict[int, tuple[Any, tuple[tuple[str, str], ...]]] = {}  # id(program) -> host work inside
        self._compiled: dict[int, tuple[Any, CompiledFacts | None]] = {}  # id(executable) -> (it, what XLA made)
        self._traced: dict[str, list[tuple[Any, dict[str, Any]]]] = {}  # function -> its last traces (object, signature)
        self.student_files: tuple[str, ...] = ()
        # Shared with the hooks of other routes (grader.child.aot): the compilations counted while
        # recording, which record this is, the last jitted call's trace, how to read an array.
        self.compiles, self.records, self.inferred = [0], [0], [None]
        self._traced_from: dict[int, tuple[Any, Any, Any]] = {}  # id(jaxpr) -> (it, function, jit info)
        self.array_class, self.is_deleted, self.FULL = array_class, array_class.is_deleted, FULL
        self._install(core, dispatch, pjit, compiler, array_class, custom_rules, numpy)
        from jax._src import stages
        from jax._src.interpreters import pxla

        from grader.child import aot
        self.hooks += aot.install(self, stages, pxla)
        self.hooks += self._watch_compilations(pjit, pxla)

    # -- the hooks: raw references only, builtins captured now ----------------------------------
    def _install(self, core: Any, dispatch: Any, pjit: Any, compiler: Any, array_class: Any,
                 custom_rules: tuple[Any, ...], numpy: Any) -> None:
        state, push, swap = self.state, self.events.append, self.swap
        eager_put, run_pjit, call_impl = (dispatch._batched_device_put_impl, pjit._run_python_pjit,
                                          pjit._pjit_call_impl_python)
        process_primitive, process_shard_map = core.EvalTrace.process_primitive, core.EvalTrace.process_shard_map
        fastpath_data, compile_or_get_cached = pjit._get_fastpath_data, compiler.compile_or_get_cached
        infer_params, is_deleted = pjit._infer_params, array_class.is_deleted
        pull = array_class.__dict__["_value"].fget
        stage, placing = self._stage_shard_map, self._placing_inputs
        seen_programs: dict[int, bool] = {}  # id of every jitted program a recorded call ran -> JAX's own?
        kept: list[Any] = []  # those programs, alive (so an id is never reused)
        compiled, last_library = self.compiles, [False]
        inner_library: dict[int, bool] = {}  # id of a program run inside an eager operation -> JAX's own?
        quiet: dict[int, tuple[Any, bool]] = {}  # id of its executable -> (it, moves nothing between devices?)
        read_facts = _read_facts

        def moves_nothing(executable: Any) -> bool:
            # Read during the call, for this decision only: what a record says XLA made of a
            # program is read after the call (``programs``), with the grader's patches restored
            if id(executable) not in quiet:
                read = read_facts(executable)
                quiet[id(executable)] = (executable, read is not None and not read["collectives"])
            return quiet[id(executable)][1]
        inferred = self.inferred  # the last jitted call's (params, function, jit info, args, kwargs)
        traced_from = self._traced_from
        host_types = _host_types()

        def intercepted(values: Any, positions: Any = None) -> Any:
            """``values`` as a placing operation receives them: kept (capturing) or replaced by
            the captured ones (feeding), at ``positions`` (all when None); arrays only."""
            job = swap[0]
            out = list(values)
            for i, value in enumerate(out):
                if (positions is None or i in positions) and type(value) in (array_class, host_types[0]):
                    out[i] = job.meet(value)
            return tuple(out) if isinstance(values, tuple) else out

        def from_host(values: Any, via: str) -> None:
            # A NumPy value given to JAX (a Python number is weakly typed: a constant, not data)
            if any(isinstance(v, host_types) and not getattr(v, "weak_type", False) for v in values):
                push(("from_host", via))

        def observed_put(*xs: Any, devices: Any, **kwargs: Any) -> Any:
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
            return placed

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
            if state[0] != FULL and (state[0] is None or state[1]):
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
                    args_flat = intercepted(args_flat, placing(p.params, len(args_flat)))
                result = run_pjit(p, args_flat, fun, args, kwargs)
            finally:
                state[1] -= 1
            status = "traced" if traced else ("compiled" if compiled[0] != before else "cached")
            donated = p.params.get("donated_invars") or ()
            # a donated buffer XLA reused is deleted when the call returns
            reused = tuple(i for i, d in enumerate(donated) if d and i < len(args_flat)
                           and type(args_flat[i]) is array_class and is_deleted(args_flat[i])) if any(donated) else ()
            push(("jit", p.params, args_flat, result[1], status, (call, compiled[0] - before, reused),
                  result[5] if state[0] == FULL else None))
            last_library[0] = seen_programs[id(program)]  # read next, by the same call's fast-path question
            return result

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
            if state[0] == FULL or primitive.name in HOST_PRIMITIVES:
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
                staged = stage(prim, fun, args, params) if state[0] == FULL else None
                out = process_shard_map(trace, prim, fun, args, **params)
            finally:
                state[1] -= 1
            push(("shard_map", params, staged, args, out))
            return out

        def executed(*args: Any, **params: Any) -> Any:
            # Every XLA program run outside JAX's C++ fast path, at any depth: a jitted
            # function's, and those JAX runs for eager work (in a full record only JAX's own
            # collective-free programs inside an eager operation take that path, after a first run)
            result = call_impl(*args, **params)
            if state[0] == FULL and result[1] is not None:
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
            if mode == FULL and not (depth and last_library[0] and moves_nothing(executable)):
                return None
            if mode is not None and not depth and not last_library[0]:
                return None
            return fastpath_data(executable, *args, **kwargs)

        def counted_compile(*args: Any, **kwargs: Any) -> Any:
            if state[0] is not None:
                compiled[0] += 1
            return compile_or_get_cached(*args, **kwargs)

        def pulled(array: Any) -> Any:
            if state[0] is not None and not state[1]:
                push(("to_host",))
            return pull(array)

        def converter(convert: Callable[..., Any]) -> Callable[..., Any]:
            # NumPy reads a CPU array through the buffer protocol, never through a Python method:
            # the conversion functions themselves are where a pull shows.
            def converted(value: Any, *args: Any, **kwargs: Any) -> Any:
                if state[0] is not None and not state[1] and type(value) is array_class:
                    push(("to_host",))
                out = convert(value, *args, **kwargs)
                if state[0] == FULL and not state[1] and type(value) is float:
                    push(("convert", (value,), out))  # jnp.float32(lr) goes through NumPy: still lr
                return out
            converted.__name__, converted.__doc__ = convert.__name__, convert.__doc__
            return converted

        def observed_rule(call: Callable[..., Any], kind: str) -> Callable[..., Any]:
            def observed(rule: Any, *args: Any, **kwargs: Any) -> Any:
                if state[0] is not None and not state[1]:
                    push(("custom_rule", kind, rule))
                return call(rule, *args, **kwargs)
            return observed

        dispatch._batched_device_put_impl = observed_put
        pjit._run_python_pjit = observed_pjit
        pjit._get_fastpath_data = no_fastpath_while_recording
        pjit._pjit_call_impl_python = executed
        pjit._infer_params = observed_infer
        compiler.compile_or_get_cached = counted_compile
        core.EvalTrace.process_primitive = observed_primitive
        core.EvalTrace.process_shard_map = observed_shard_map
        value_property = property(pulled)
        array_class._value = value_property
        self.hooks = [(array_class, "_value", value_property), (dispatch, "_batched_device_put_impl", observed_put),
                      (pjit, "_run_python_pjit", observed_pjit),
                      (pjit, "_get_fastpath_data", no_fastpath_while_recording),
                      (pjit, "_pjit_call_impl_python", executed),
                      (pjit, "_infer_params", observed_infer),
                      (compiler, "compile_or_get_cached", counted_compile),
                      (core.EvalTrace, "process_primitive", observed_primitive),
                      (core.EvalTrace, "process_shard_map", observed_shard_map)]
        for name in ("asarray", "array", "asanyarray", "ascontiguousarray"):
            hook = converter(getattr(numpy, name))
            setattr(numpy, name, hook)
            self.hooks.append((numpy, name, hook))
        for rule_class in custom_rules:
            hook = observed_rule(rule_class.__call__, rule_class.__name__)
            rule_class.__call__ = hook
            self.hooks.append((rule_class, "__call__", hook))

    def _watch_compilations(self, pjit: Any, pxla: Any) -> list[tuple[Any, str, Any]]:
        """Every program XLA compiles, by whichever route it was asked for: a jitted call
        (``pjit._pjit_call_impl_python``) and an executable lowered ahead of time
        (``stages.Traced.lower``) both lower through ``pjit._resolve_and_lower``, which knows the
        program (its jaxpr says which function it was traced from), and compile it with
        ``MeshComputation.compile``, which calls XLA (``compile_or_get_cached``) when no
        executable is kept for it. Each compilation during a record is a ``compile`` event."""
        state, push, compiles = self.state, self.events.append, self.compiles
        resolve_and_lower, compile_ = pjit._resolve_and_lower, pxla.MeshComputation.compile
        lowered: dict[int, tuple[Any, dict[str, Any]]] = {}  # id(computation) -> (it, its program's params)

        def observed_lower(*args: Any, **params: Any) -> Any:
            computation = resolve_and_lower(*args, **params)
            if id(computation) not in lowered:
                lowered[id(computation)] = (computation, {"jaxpr": params.get("jaxpr"), "name": params.get("name")})
            return computation

        def observed_compile(computation: Any, *args: Any, **kwargs: Any) -> Any:
            before = compiles[0]
            executable = compile_(computation, *args, **kwargs)
            if state[0] is not None and compiles[0] != before and id(computation) in lowered:
                push(("compile", lowered[id(computation)][1], compiles[0] - before))
            return executable

        pjit._resolve_and_lower = observed_lower
        pxla.MeshComputation.compile = observed_compile
        return [(pjit, "_resolve_and_lower", observed_lower), (pxla.MeshComputation, "compile", observed_compile)]

    def _placing_inputs(self, params: dict[str, Any], count: int) -> frozenset[int]:
        """The positions of a jitted call's operands it places: a specified in_sharding, or a
        placement inside its program of the operand or of a value computed from it."""
        program = params["jaxpr"]
        if id(program) not in self._placing:
            inner = _placed_invars(program)
            shardings = params.get("in_shardings") or ()
            given = {i for i, s in enumerate(shardings) if type(s).__name__ not in ("UnspecifiedValue", "AUTO")}
            self._placing[id(program)] = (program, frozenset(given | inner))
        return frozenset(i for i in self._placing[id(program)][1] if i < count)

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
        self.records[0] += 1
        if mode == FULL:  # the student's functions never reach the fast path while recorded (load clears it)
            self.clear_caches()
        self.state[0], self.state[1] = mode, 0

    def stop(self) -> list[tuple[Any, ...]]:
        if self.state[0] == FULL:
            # JAX's C++ dispatch sends a call back to Python for good once it was given no fast-path
            # data for its shapes: without this, every jnp function the full record ran (each
            # eager op too) would stay ~10x slower in all later calls
            self.clear_caches()
        self.state[0] = None
        events = list(self.events)
        self.events.clear()
        return events

    def intact(self) -> bool:
        """Whether every hook is still the one installed (checked after a call, before restoring)."""
        return all(getattr(owner, name) is hook for owner, name, hook in self.hooks)

    # -- what a call did besides placing ----------------------------------------------------------
    def jit_calls(self, events: list[tuple[Any, ...]], leaves: list[tuple[str, Any]] = (),
                  returned: list[tuple[str, Any]] = ()) -> list[JitCallData]:
        """Every jitted function the call ran, in order: its name, the function (``step at
        solution.py:12``), whether it is the submission's own, whether it was traced (a
        program the recorder had not seen), compiled, or served from JAX's caches, how many
        programs it compiled, why it was traced or compiled again (``again``: what differs from
        the last time this function was), the arguments it donates and those whose buffers
        XLA reused, and of those, the leaves of the graded function's arguments (``leaves``: by
        path) that went in as they were given, not copied, and the leaves of what the function
        returned (``returned``) that the call's program computed."""
        given = {id(value): path for path, value in leaves}
        results = {id(value): path for path, value in returned}
        calls: list[JitCallData] = []
        for event in events:
            if event[0] != "jit" or any(is_staged(v) for v in event[2]):
                continue
            # (a forger's events may be shorter: what they lack is unknown, never an error here)
            params, status = event[1], event[4] if len(event) > 4 else "cached"
            call, compiles, reused = event[5] if len(event) > 5 and len(event[5]) == 3 else (None, 0, ())
            names = _arg_names(call, len(event[2]))
            entry: dict[str, Any] = {"name": str(params.get("name")), "status": status, "compiles": int(compiles)}
            function, own = self._source(params, *((call[1], call[2]) if call is not None else ()))
            if call is not None:
                p, fun, info = call[0], call[1], call[2]
                if status != "cached":
                    now = (fun, _signature(p, info, call[3], call[4], event[2]))
                    earlier = self._traced.setdefault(function, [])
                    if earlier:  # told apart from the closest earlier trace (JAX keeps them all)
                        entry["again"] = _closest(earlier, now)
                    earlier[:] = [*earlier[-31:], now]
            donated = params.get("donated_invars") or ()
            operands = event[2]
            entry.update(function=function, own=own, donated=[names[i] for i, d in enumerate(donated) if d][:16],
                         reused=[names[i] for i in reused][:16],
                         donated_leaves=[given[id(operands[i])] for i, d in enumerate(donated)
                                         if d and i < len(operands) and id(operands[i]) in given][:16],
                         reused_leaves=[given[id(operands[i])] for i in reused if id(operands[i]) in given][:16],
                         computes=[results[id(out)] for out, made in zip(event[3], _computed(params.get("jaxpr")))
                                   if made and id(out) in results][:16])
            calls.append(entry)
        return calls[:MAX_JIT_CALLS]

    def compilations(self, events: list[tuple[Any, ...]]) -> list[CompilationData]:
        """The programs XLA compiled during the call, by the function each was traced from (in
        the order first compiled): the submission's own or JAX's (an eager op's first run at a
        shape), whatever route asked for it."""
        found: dict[str, CompilationData] = {}
        for event in events:
            if event[0] == "compile" and len(event) == 3 and type(event[2]) is int:
                function, own = self._source(event[1])
                entry = found.setdefault(function, {"function": function, "own": own, "count": 0})
                entry["count"] += event[2]
        return list(found.values())[:64]

    def host_work(self, events: list[tuple[Any, ...]]) -> list[HostData]:
        """What the call did on the host in the middle of its JAX work: host callbacks, custom
        derivative rules of the student's own, and values pulled to NumPy and given back to
        JAX afterwards. Each: ``kind`` (callback, custom_rule, round_trip) and ``call``."""
        found: dict[tuple[str, str], None] = {}
        left = False  # some value went to the host (a pull, a debug callback) before this event
        for event in events:
            kind, inside = event[0], ()
            if kind == "to_host":
                left = True
            elif kind == "from_host" and left:
                found[("round_trip", f"a JAX array pulled to NumPy (np.asarray, float(), .item(), print), then a "
                                     f"NumPy value given back to JAX ({event[1]})")] = None
            elif kind == "primitive" and event[1].name in HOST_PRIMITIVES:
                inside = ((event[1].name, HOST_PRIMITIVES[event[1].name]),)
            elif kind == "custom_rule" and self._is_student(getattr(event[2], "fun", None)):
                found[("custom_rule", f"jax.{event[1]} {_name(event[2])}")] = None
            elif kind in ("jit", "shard_map"):
                inside = self._host_inside(event[1].get("jaxpr"))
            for primitive, call in inside:
                if primitive == "debug_callback":
                    left = True
                else:
                    found[("custom_rule" if primitive.startswith("custom") else "callback", call)] = None
        return [{"kind": k, "call": c} for k, c in list(found)[:8]]

    def programs(self, events: list[tuple[Any, ...]]) -> list[ProgramData]:
        """Every XLA program a fully recorded call ran, once each, in the order first run: its
        name, the function (``step at solution.py:12`` for a jitted function the call made),
        whether it is the submission's own, how many times it ran, and what XLA made of it
        (``grader.child.compiled``: collectives and memory per device). JAX's own programs
        count too: an eager ``shard_map`` runs each collective as one, an eager sum over a sharded
        array its all-reduce."""
        made: dict[int, tuple[str, bool]] = {}  # id(executable) -> the jitted function the call made
        for event in events:
            if event[0] == "jit" and len(event) > 6 and event[6] is not None and len(event[5]) == 3:
                call = event[5][0]
                made[id(event[6])] = self._source(event[1], *((call[1], call[2]) if call is not None else ()))
        found: dict[int, ProgramData] = {}
        for event in events:
            if event[0] != "executed" or len(event) < 3:
                continue
            executable = event[2]
            if id(executable) in found:
                found[id(executable)]["runs"] += 1
                continue
            if id(executable) not in self._compiled:  # kept alive: its id is never another's
                self._compiled[id(executable)] = (executable, compiled.facts(executable))
            read = self._compiled[id(executable)][1]
            if read is not None and len(found) < MAX_PROGRAMS:
                function, own = made.get(id(executable), (str(event[1]), False))
                found[id(executable)] = {"name": str(event[1]), "function": function, "own": own, "runs": 1, **read}
        return list(found.values())

    def _host_inside(self, program: Any) -> tuple[tuple[str, str], ...]:
        if program is None:
            return ()
        if id(program) not in self._host:
            self._host[id(program)] = (program, tuple(_host_equations(program, self._is_student)))
        return self._host[id(program)][1]

    def _owns(self, function: Any, info: Any) -> bool:
        """Whether a jitted function is the submission's own: its code, or (through a wrapper
        of JAX's, ``jax.jit(jax.shard_map(f))``) the file JAX says it was defined in."""
        where = str(getattr(info, "fun_sourceinfo", "")).rpartition(" at ")[2].rpartition(":")[0]
        return self._is_student(function) or (bool(where) and self._is_student(where))

    def _is_student(self, function: Any) -> bool:
        """Whether ``function`` (or the file a program was traced from) is the submission's own code."""
        filename = function if isinstance(function, str) else getattr(code_of(function), "co_filename", "")
        return bool(filename) and any(filename == f or filename.startswith(f.rstrip(os.sep) + os.sep)
                                      for f in self.student_files)

    def _source(self, params: dict[str, Any], fun: Any = None, info: Any = None) -> tuple[str, bool]:
        """The function a jitted program was made from, as ``step at solution.py:12``, and whether
        it is the submission's own: from the function itself when the call that traced it was
        seen, else from what JAX wrote into the program (an executable compiled ahead of time
        at import)."""
        if fun is not None:
            code = code_of(fun)
            where = str(getattr(info, "fun_sourceinfo", ""))
            if code is not None and " at " not in where:  # a callable object: JAX finds no code in it
                where = f"{type(fun).__name__}.{code.co_name} at {code.co_filename}:{code.co_firstlineno}"
            return _source_name(where or str(params.get("name"))), self._owns(fun, info)
        program = params.get("jaxpr")
        if id(program) in self._traced_from:
            _, fun, info = self._traced_from[id(program)]
            return self._source(params, fun, info)
        jaxpr = getattr(program, "jaxpr", program)
        where = str(getattr(getattr(jaxpr, "debug_info", None), "func_src_info", "") or "")
        file = where.rpartition(" at ")[2].rpartition(":")[0]
        return (_source_name(where) if " at " in where else str(params.get("name"))), bool(file) and self._is_student(file)


def code_of(function: Any) -> Any:
    """The code object a callable runs: a function's own, through ``functools.partial`` and
    decorators (``__wrapped__``), a bound method's, or a callable object's ``__call__`` (the shape
    of an Equinox or Flax module); None for a builtin."""
    for _ in range(8):
        code = getattr(function, "__code__", None)
        if code is not None:
            return code
        inner = getattr(function, "func", None) or getattr(function, "__wrapped__", None) \
            or getattr(function, "__func__", None)
        if inner is None and not isinstance(function, type):
            call = getattr(type(function), "__call__", None)
            inner = call if call is not None and hasattr(call, "__code__") else None
        if inner is None:
            return None
        function = inner
    return None


class Swap:
    """One counterfactual call: ``capturing`` keeps every value a placing operation receives
    (in ``values``); otherwise each is replaced, in order, by the captured one of the same
    shape and dtype. ``onto``, ``shape`` and ``turn`` say which eager device_put counts
    (:meth:`judged`); ``count`` how many values were met (captured, or fed)."""

    def __init__(self, capturing: bool, onto: Callable[[Any], bool], shape: tuple[int, ...] | None,
                 turn: int | None, values: list[Any] | None = None) -> None:
        self.capturing, self.onto, self.shape, self.turn = capturing, onto, shape, turn
        self.values = [] if values is None else values
        self.count, self.puts = 0, 0

    def judged(self, value: Any, target: Any) -> bool:
        """Whether this eager device_put is the one judged: onto its sharding, of its shape (not,
        say, the result placed afterwards), and the ``turn``-th such one (all when None)."""
        if not self.onto(target) or (self.shape is not None and tuple(getattr(value, "shape", ())) != self.shape):
            return False
        self.puts += 1
        return self.turn is None or self.puts - 1 == self.turn

    def meet(self, value: Any) -> Any:
        if self.capturing:
            self.values.append(value)
            self.count += 1
            return value
        if self.count < len(self.values):
            other = self.values[self.count]
            self.count += 1
            if other.shape == value.shape and other.dtype == value.dtype:
                return other
        return value


def _host_types() -> tuple[type, ...]:
    import numpy as np
    return (np.ndarray, np.generic)  # JAX wraps NumPy operands of eager primitives in an ndarray subclass


def _name(rule: Any) -> str:
    return str(getattr(getattr(rule, "fun", None), "__name__", "") or getattr(rule, "__name__", "") or "")


def _source_name(sourceinfo: str) -> str:
    """JAX's ``step at /scratch/abc/solution.py:12`` as ``step at solution.py:12``."""
    name, at, where = sourceinfo.rpartition(" at ")
    return f"{name} at {os.path.basename(where)}" if at else sourceinfo


def _arg_names(call: Any, count: int) -> list[str]:
    """A name for each flat operand of a jitted call (the program's constants first, unnamed)."""
    if call is None:
        return [f"operand {i}" for i in range(count)]
    p = call[0]
    names = list(p.arg_names or ())
    constants = len(p.consts)
    return ["a constant" if i < constants else (names[i - constants] if i - constants < len(names) else
                                                   f"operand {i}") for i in range(count)]


def _static_text(value: Any) -> tuple[str, Any]:
    """A static argument as text, and what to compare it by: the value itself only for
    Python's own scalars and tuples of them (comparing a submission's object would run its ``__eq__``)."""
    simple = (bool, int, float, complex, str, type(None))
    if type(value) in simple or (type(value) is tuple and len(value) <= 8 and all(type(v) in simple for v in value)):
        text = repr(value)
        return (text if len(text) <= 60 else text[:57] + "..."), value
    return f"a {type(value).__name__} object", id(value)


def _signature(p: Any, info: Any, args: Any, kwargs: Any, operands: Any) -> dict[str, Any]:
    """What a jitted function was traced for: each traced argument's type (shape, dtype, weak
    type) and sharding, and each static argument's value."""
    names = list(p.arg_names or ())
    traced = {}
    for i, aval in enumerate(p.in_avals):
        name = names[i] if i < len(names) else f"operand {i}"
        operand = operands[len(p.consts) + i] if len(p.consts) + i < len(operands) else None
        sharding = getattr(operand, "sharding", None) if type(operand).__name__ == "ArrayImpl" else None
        traced[name] = (str(aval.str_short()) + (" (weakly typed)" if getattr(aval, "weak_type", False) else ""),
                        None if sharding is None else repr(sharding)[:200])
    static = {}
    parameters = list(info.fun_signature.parameters) if getattr(info, "fun_signature", None) is not None else []
    for i in getattr(info, "static_argnums", ()):
        if 0 <= i < len(args):
            static[parameters[i] if i < len(parameters) else f"argument {i}"] = _static_text(args[i])
    for name in getattr(info, "static_argnames", ()):
        if name in kwargs:
            static[name] = _static_text(kwargs[name])
    return {"traced": traced, "static": static}


def _closest(earlier: list[tuple[Any, dict[str, Any]]], now: tuple[Any, dict[str, Any]]) -> RecompiledData:
    """The first change from the earlier trace that differs least, the latest first; one
    difference is the fewest there can be (a function jitted anew on every call meets it at once)."""
    fewest = _changes(earlier[-1], now)
    for trace in reversed(earlier[:-1]):
        if len(fewest) == 1:
            break
        changes = _changes(trace, now)
        if len(changes) < len(fewest):
            fewest = changes
    return fewest[0]


def _changes(earlier: tuple[Any, dict[str, Any]], now: tuple[Any, dict[str, Any]]) -> list[RecompiledData]:
    """How a trace differs from an earlier one of the same function, most telling first
    (``what``: type, sharding, static, arguments, new_function; other when nothing differs)."""
    (fun_before, before), (fun_now, after) = earlier, now
    found: list[RecompiledData] = []
    for name, (kind, sharding) in after["traced"].items():
        was = before["traced"].get(name)
        if was is None:
            found.append({"what": "arguments", "argument": name, "before": "absent", "after": kind})
        elif was[0] != kind:
            found.append({"what": "type", "argument": name, "before": was[0], "after": kind})
        elif was[1] != sharding:
            found.append({"what": "sharding", "argument": name, "before": str(was[1]), "after": str(sharding)})
    for name, (text, value) in after["static"].items():
        was = before["static"].get(name)
        if was is None or type(was[1]) is not type(value) or was[1] != value:
            found.append({"what": "static", "argument": name, "before": "absent" if was is None else was[0],
                          "after": text})
    if not found and (set(before["traced"]) != set(after["traced"]) or set(before["static"]) != set(after["static"])):
        found.append({"what": "arguments", "argument": "", "before": ", ".join(before["traced"]),
                      "after": ", ".join(after["traced"])})
    if not found and fun_before is not fun_now:
        found.append({"what": "new_function", "argument": "", "before": "", "after": ""})
    return found or [{"what": "other", "argument": "", "before": "", "after": ""}]


def _computed(program: Any) -> list[bool]:
    """For each output of a program, whether the program computes it (not an operand or a
    constant passed straight through)."""
    jaxpr = getattr(program, "jaxpr", program)
    passed = set(getattr(jaxpr, "invars", ())) | set(getattr(jaxpr, "constvars", ()))
    return [not hasattr(v, "val") and v not in passed for v in getattr(jaxpr, "outvars", ())]


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
        elif any(_places(sub) for sub in _sub_programs(eqn.params)):
            positions = range(len(eqn.invars))
        else:
            continue
        needed.update(eqn.invars[i] for i in positions if i < len(eqn.invars) and not hasattr(eqn.invars[i], "val"))
    return frozenset(i for i, v in enumerate(getattr(jaxpr, "invars", ())) if v in needed)


def _places(program: Any) -> bool:
    jaxpr = getattr(program, "jaxpr", program)
    return any(e.primitive.name in PLACING_PRIMITIVES or any(_places(s) for s in _sub_programs(e.params))
               for e in getattr(jaxpr, "eqns", ()))


def _sub_programs(params: dict[str, Any]) -> list[Any]:
    found = []
    for value in params.values():
        for candidate in (value if isinstance(value, (tuple, list)) else (value,)):
            if hasattr(candidate, "eqns") or hasattr(getattr(candidate, "jaxpr", None), "eqns"):
                found.append(candidate)
    return found


def _host_equations(program: Any, is_student: Callable[[Any], bool], depth: int = 0) -> list[tuple[str, str]]:
    """Host callbacks and the student's own custom derivative rules anywhere in a program."""
    jaxpr = getattr(program, "jaxpr", program)
    found: list[tuple[str, str]] = []
    for eqn in getattr(jaxpr, "eqns", ()) if depth < 16 else ():
        name = eqn.primitive.name
        if name in HOST_PRIMITIVES:
            found.append((name, HOST_PRIMITIVES[name]))
        elif name in ("custom_vjp_call", "custom_jvp_call", "custom_vjp_call_jaxpr"):
            inner = eqn.params.get("call_jaxpr") or eqn.params.get("fun_jaxpr")
            source = getattr(getattr(getattr(inner, "jaxpr", inner), "debug_info", None), "func_src_info", None) or ""
            at = source.rfind(" at ")
            if at >= 0 and is_student(source[at + 4:].rsplit(":", 1)[0]):
                found.append((name, f"jax.{name.removesuffix('_call').removesuffix('_call_jaxpr')} "
                                    f"{source[:at]}"))
        for sub in _sub_programs(eqn.params):
            found.extend(_host_equations(sub, is_student, depth + 1))
    return found


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
            found.extend(_inside(params["jaxpr"], describe))
        elif event[0] == "shard_map":
            _, params, _, args, _ = event
            mesh = params.get("mesh")
            for value, spec in zip(args, params.get("in_specs") or ()):
                found.append({"via": "shard_map_in", "operand": owner.get(id(concrete(value))),
                              "sharding": {**mesh_data(mesh), "type": "NamedSharding",
                                           "spec": simple_param(spec, describe)}})
    return found


def _inside(program: Any, describe: Describe, depth: int = 0) -> list[Placement]:
    """The shard_map specs and jit shardings a jitted program applies inside it (not tied to an
    argument: ``operand`` None), for the cheap record of every call."""
    found: list[Placement] = []
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
_READS = {"device_put": 1, "jit": 2, "primitive": 3, "shard_map": 3, "convert": 1}


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

    inputs = [value_id(value) for _, value in leaves]
    for event in events:
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
            for value, new in zip(placed, produced):
                if is_array(value) and not value.is_deleted():  # a donated one's buffers are another array's now
                    arrays[str(new)] = held(value, describe)
        elif kind == "jit":
            params, args, outs = event[1:4]
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
        if is_array(value) and not value.is_deleted():
            arrays[str(new)] = held(value, describe)
    data = builder.data(inputs, outputs, [p for p, _ in leaves], [p for p, _ in returned])
    data["arrays"] = arrays
    return data
