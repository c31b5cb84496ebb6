"""What a real call did, as a program (runs in the child).

Tracing (``jax.make_jaxpr``) shows what a function *would* do; this records what a call
really *did*, so that code which cannot be traced (it prints ``out.sharding``, reads
``addressable_shards``, calls ``block_until_ready``) is judged as precisely as code that can,
and so that code which behaves differently when traced is caught. The ``Recorder`` holds what
the routes share (the events of the call, the mode and depth, the counterfactual swap, the
compilation counter, whose each program is); each route to XLA is a module of its own whose
hooks are in place before the submission is imported, and whose events are read after the
call:

- ``route_eager``: eager ``jax.device_put``, primitives applied one by one, eager ``shard_map``;
- ``route_jit``: every call of a jitted function that reaches Python (the C++ fast path is
  denied while a call is recorded), and every XLA program run;
- ``route_aot``: executables compiled ahead of time (``jit(f).lower(...).compile()``) and their calls;
- ``route_compile``: every XLA compilation, by any route;
- ``route_host``: values pulled to the host and given back, host callbacks whose results are used.

They are read by ``jit_calls`` (the jitted calls, from the jit and ahead-of-time routes alike),
``route_compile.compilations``, ``route_host.host_work``, ``compiled.programs`` (what XLA made
of each program run) and ``dataflow`` (placements and the call as one program). A new route is
one new module with an ``install`` and, if it says something new, a reader.

Every call records its placements (``placements`` mode: eager device_put, the in/out
shardings of each jitted function that reached Python, eager shard_map specs), so the calls
of the value checks can be compared with the probe call; the probe call records everything
(``full``). Only operations the submission itself performs count (a ``depth`` counter skips
what JAX does inside them). During the call the hooks only append raw references to a list,
using builtins captured when they were made, so a submission that swaps builtins or JAX
functions during its call cannot change what was recorded, only stop recording (``intact``);
everything is described after the call, once the grader's patches are restored.
"""
from __future__ import annotations

from typing import Any, Callable

from grader.child import compiled, route_aot, route_compile, route_eager, route_host, route_jit
from grader.child.donation import Donations
from grader.child.jit_calls import jit_calls
from grader.child.ownership import Ownership
from grader.child.provenance import Provenance
from grader.child.swap import Swap
from grader.wire import CompilationData, CompiledFacts, HostData, JitCallData, ProgramData

FULL, PLACEMENTS = "full", "placements"


class Recorder:
    """Records the submission's JAX operations while ``mode`` is set."""

    def __init__(self, core: Any, dispatch: Any, pjit: Any, make_jaxpr: Callable[..., Any], compiler: Any,
                 array_class: Any, numpy: Any) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.state = [None, 0]  # [mode, depth]
        self.swap: list[Swap | None] = [None]  # during a capturing or feeding call
        self.Swap = Swap  # for the child, which imports nothing from the grader after the fork
        self.ownership = Ownership()
        # Shared by the routes: the compilations counted while recording, which record this is,
        # the last jitted call's trace, what donations gave up, which program made a call's
        # outputs, the class of JAX's arrays.
        self.compiles, self.records, self.inferred = [0], [0], [None]
        self.provenance = Provenance()
        self.compile_s = [0.0]  # seconds compile_or_get_cached took while recording (grader.timings)
        self.array_class, self.donations, self.FULL = array_class, Donations(array_class), FULL
        self.donated: list[Any] = []  # weak references to the arrays an eager device_put donated
        self._caches = (pjit._cpp_pjit_cache_fun_only, pjit._cpp_pjit_cache_explicit_attributes)
        self._host: dict[int, tuple[Any, tuple[str, ...], bool]] = {}  # id(program) -> host callbacks inside
        self._compiled: dict[int, tuple[Any, CompiledFacts | None]] = {}  # id(executable) -> (it, what XLA made)
        self._traces: dict[str, list[tuple[Any, dict[str, Any]]]] = {}  # function -> its last traces
        import jax
        from jax._src import array as array_module
        from jax._src import stages
        from jax._src.interpreters import pxla
        self.hooks = [*self.provenance.install(pxla), *route_host.install(self, array_class, numpy),
                      *route_eager.install(self, core, dispatch, make_jaxpr, array_module, jax),
                      *route_jit.install(self, pjit),
                      *route_compile.install(self, compiler, pjit, pxla),
                      *route_aot.install(self, stages, pxla)]

    def owner_of(self, event: tuple[Any, ...]) -> tuple[str, bool]:
        """The function a recorded jit event's program compiles, and whether it is the
        submission's own (as ``compiled.programs`` names each program)."""
        call = event[5][0] if len(event) > 6 and len(event[5]) == 4 else None
        return self.ownership.source(event[1], *((call[1], call[2]) if call is not None else ()))

    @property
    def student_files(self) -> tuple[str, ...]:
        return self.ownership.student_files

    @student_files.setter
    def student_files(self, files: tuple[str, ...]) -> None:
        self.ownership.student_files = files

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

    def holds_donated(self) -> bool:
        """Whether an array an eager ``device_put`` donated is still alive: JAX 0.10 crashes
        listing the live arrays (``jax.live_arrays``) while one moved to other devices is."""
        self.donated[:] = [ref for ref in self.donated if ref() is not None]
        return bool(self.donated)

    def intact(self) -> bool:
        """Whether every hook is still the one installed (checked after a call, before restoring)."""
        return all(getattr(owner, name) is hook for owner, name, hook in self.hooks)

    # -- what the call did, read from its events --------------------------------------------------
    def jit_calls(self, events: list[tuple[Any, ...]], leaves: Any = (), returned: Any = ()) -> list[JitCallData]:
        return jit_calls(events, self.ownership, self._traces, leaves, returned)

    def compilations(self, events: list[tuple[Any, ...]]) -> list[CompilationData]:
        return route_compile.compilations(events, self.ownership)

    def host_work(self, events: list[tuple[Any, ...]], returned: list[tuple[str, Any]]) -> list[HostData]:
        return route_host.host_work(events, [value for _, value in returned], self._host)

    def programs(self, events: list[tuple[Any, ...]]) -> list[ProgramData]:
        return compiled.programs(events, self.ownership, self._compiled)
