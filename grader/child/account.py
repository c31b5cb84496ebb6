"""The account of a fully recorded call (runs in the child): the programs it ran, as
``jax.export`` serializations, and the dataflow between them, for the witness
(``grader.witness``) to run again in a process where no submission's code ever runs.

Each operation the call performed becomes a step: an eager ``device_put`` a ``place`` step
(the target sharding as described data), and so does an array assembled from its pieces
(``jax.make_array_from_callback``: the argument its pieces were cut from, else their values
joined, placed as the array is), a jitted program, an eager primitive or an eager
``shard_map`` a ``program`` step (exported with the shardings of what it read). A step reads
the call's argument leaves (``["arg", i]``), an output of an earlier step (``["step", j, k]``)
or a ``constant``: an array that came from no recorded operation (made at import, pulled to
the host and given back, computed by a host callback), sent as its bytes and sharding. A host
callback whose results nothing reads (a ``jax.debug.print``, a logging ``io_callback``) is
dropped from the program first (``grader.child.callbacks``): it sends values to the host and
computes nothing the call uses. What still cannot be exported (a program that uses a host
callback's result) is a ``break``: its outputs are constants too, so the dataflow through it is
visibly cut, and judged as the recorder judges it.
An array the call made and left alive that no step reads (made by no recorded operation: a
``jax.make_array_from_callback`` kept in a cache) is ``kept``: its shape, type and sharding.

Nothing here is trusted by the grader: the witness checks the account by running it on the
grader's own arguments and comparing with what the call returned. Building it never raises: a
failure is the account's ``error``, and the witness then confirms nothing.
"""
from __future__ import annotations

import base64
import contextlib
from typing import Any, Callable, Sequence

from grader.child.callbacks import HOST_PRIMITIVES, is_read, read_callbacks, without_unread_callbacks
from grader.child.dataflow import joined_argument
from grader.wire import WIDENED, encode_array

MAX_ACCOUNT_BYTES = 16 << 20  # programs and constants of one call, base64 included
MAX_STEPS = 512  # a Python loop of eager operations longer than this is not accounted for
MAX_KEPT = 256  # arrays the call made, kept alive and no step read


def account_of_call(events: list[tuple[Any, ...]], leaves: list[tuple[str, Any]], returned: list[tuple[str, Any]],
                    jax: Any, np: Any, describe: Callable[[Any], dict[str, Any]], concrete: Callable[[Any], Any],
                    is_staged: Callable[[Any], bool], owner: Callable[[tuple[Any, ...]], tuple[str, bool]],
                    kept: Sequence[Any] = ()) -> dict[str, Any]:
    """The account of a call from its recorded ``events``; ``owner`` names the function a jit
    event's program compiles and whether it is the submission's own (``grader.child.ownership``);
    ``kept``: the arrays the call made that are still alive after it."""
    try:
        return _Accountant(jax, np, describe, concrete, owner).account(events, leaves, returned, is_staged, kept)
    except Exception as error:  # noqa: BLE001 (an account the witness cannot check, never a failed call)
        return {"error": f"{type(error).__name__}: {error}"[:300]}


class _Accountant:
    def __init__(self, jax: Any, np: Any, describe: Callable[[Any], dict[str, Any]], concrete: Callable[[Any], Any],
                 owner: Callable[[tuple[Any, ...]], tuple[str, bool]]) -> None:
        self.jax, self.np, self.describe, self.concrete, self.owner = jax, np, describe, concrete, owner
        self.refs: dict[int, list[Any]] = {}
        self.kept: list[Any] = []  # every value referred to, alive until the account is built
        self.steps: list[dict[str, Any]] = []
        self.programs: list[dict[str, str]] = []  # {"b64": serialized}: the channel keeps b64 strings whole
        self.exported: dict[Any, int] = {}  # what a program step runs -> its index in ``programs``
        self.constants: list[dict[str, Any]] = []
        self.size = 0

    def account(self, events: list[tuple[Any, ...]], leaves: list[tuple[str, Any]],
                returned: list[tuple[str, Any]], is_staged: Callable[[Any], bool], kept: Sequence[Any]
                ) -> dict[str, Any]:
        for index, (_, value) in enumerate(leaves):
            self._bind(value, ["arg", index])
        for index, event in enumerate(events):
            kind = event[0]
            reads = {"device_put": 1, "jit": 2, "primitive": 3, "shard_map": 3, "assembled": 2}.get(kind)
            if reads is None or any(is_staged(v) or _batched(v) for v in event[reads]):
                # not an operation on values (a compilation, a host pull), a transformation's
                # staging, or an eager vmap's operation on one example (its batched operation on
                # the arrays themselves is an event of its own)
                continue
            if len(self.steps) == MAX_STEPS:
                return {"error": f"the call ran more than {MAX_STEPS} operations"}
            if kind == "device_put":
                _, xs, devices, placed = event
                for x, target, out in zip(xs, devices, placed):
                    self._step({"kind": "place", "sharding": self.describe(target), "reads": [self._ref(x)]}, [out])
            elif kind == "assembled":  # made from its pieces: the argument they were cut from, else
                _, _, pieces, sharding, made = event  # the pieces' values joined, placed as the array is
                whole = joined_argument(made, pieces, leaves)
                if whole is None:
                    self.constants.append(self._constant(self.np.asarray(made)))
                read = self._ref(whole) if whole is not None else ["constant", len(self.constants) - 1]
                self._step({"kind": "place", "sharding": self.describe(sharding), "reads": [read]}, [made])
            elif kind == "jit":
                params, args, outs = event[1:4]
                self._program(("jit", id(params["jaxpr"])), _jit_primitive(),
                              {**params, "jaxpr": without_unread_callbacks(params["jaxpr"])}, args, list(outs),
                              self.owner(event), _compiled_in_shardings(event, len(args)))
            elif kind == "primitive":
                _, primitive, params, args, out = event
                if primitive.name in HOST_PRIMITIVES and not is_read(
                        list(out) if primitive.multiple_results else [out], events[index + 1:],
                        [value for _, value in returned]):
                    continue  # a log (jax.debug.print outside jit): it computes nothing the call uses
                self._program(("primitive", primitive, repr(sorted(params.items(), key=str))), primitive, params,
                              args, list(out) if primitive.multiple_results else [out], (primitive.name, False))
            else:  # an eager shard_map: its staged program, run as one
                _, params, staged, args, out = event
                self._closed(staged, args, list(out))
        outputs = [self._ref(value) for _, value in returned]
        if self.size > MAX_ACCOUNT_BYTES:
            return {"error": f"the call's programs and constants take {self.size:,} bytes"}
        # made without a recorded operation and read by none (a jax.make_array_from_callback kept
        # in a module's cache): no step holds them, so only where they live is handed over
        unread = [{"shape": [int(n) for n in value.shape], "dtype": str(value.dtype),
                   "sharding": self.describe(value.sharding)}
                  for value in kept if id(value) not in self.refs][:MAX_KEPT]
        return {"steps": self.steps, "programs": self.programs, "constants": self.constants, "outputs": outputs,
                "kept": unread}

    def _bind(self, value: Any, ref: list[Any]) -> None:
        value = self.concrete(value)
        self.refs[id(value)] = ref
        self.kept.append(value)

    def _ref(self, value: Any) -> list[Any]:
        value = self.concrete(value)
        known = self.refs.get(id(value))
        if known is not None:
            return known
        if type(value) in (bool, int, float):
            return ["literal", value]
        ref = ["constant", len(self.constants)]
        self.constants.append(self._constant(value))
        self._bind(value, ref)
        return ref

    def _constant(self, value: Any) -> dict[str, Any]:
        """A value no recorded operation made: its numbers and where it lived."""
        np = self.np
        array = np.asarray(value)
        if array.dtype.name in WIDENED:
            data = encode_array(array.astype(WIDENED[array.dtype.name]))
            data["narrow"] = array.dtype.name
        else:
            data = encode_array(array)
        self.size += len(data["b64"])
        sharding = getattr(value, "sharding", None)
        return {"array": data, "sharding": self.describe(sharding) if sharding is not None else {"type": "default"}}

    def _step(self, step: dict[str, Any], outs: list[Any]) -> None:
        index = len(self.steps)
        self.steps.append(step)
        for k, out in enumerate(outs):
            self._bind(out, ["step", index, k])

    def _program(self, key: Any, primitive: Any, params: dict[str, Any], args: Any, outs: list[Any],
                 named: tuple[str, bool], placed: tuple[Any, ...] | None = None) -> None:
        reads = [self._ref(a) for a in args]
        arrays = [i for i, r in enumerate(reads) if r[0] != "literal"]
        avals = [self._spec(args[i], placed[i] if placed is not None else None) for i in arrays]
        literal = {i: r[1] for i, r in enumerate(reads) if r[0] == "literal"}
        key = (key, tuple((tuple(a.shape), str(a.dtype), str(a.sharding)) for a in avals), repr(literal))
        if key not in self.exported:
            def run(*values: Any) -> Any:
                given = iter(values)
                return primitive.bind(*(literal[i] if i in literal else next(given) for i in range(len(reads))),
                                      **params)
            self.exported[key] = self._export(run, avals, params.get("jaxpr"))
        self._emit(self.exported[key], [reads[i] for i in arrays], outs, named)

    def _closed(self, staged: Any, args: Any, outs: list[Any]) -> None:
        reads = [self._ref(a) for a in args]
        from jax.extend.core import jaxpr_as_fun
        # A shard_map without mesh= ran under jax.set_mesh: its program names an abstract mesh,
        # which lowers to Shardy calls no compiler resolves unless that mesh is set again.
        mesh = self._mesh_of([*outs, *args])
        setting = getattr(self.jax, "set_mesh", None) or getattr(self.jax.sharding, "use_mesh", None)
        with setting(mesh) if mesh is not None and setting is not None else contextlib.nullcontext():
            program = self._export(jaxpr_as_fun(without_unread_callbacks(staged)), [self._spec(a) for a in args],
                                   staged)
        self._emit(program, reads, outs, ("shard_map", False))

    def _mesh_of(self, values: list[Any]) -> Any:
        """The concrete mesh the first of ``values`` placed on one lives on, or None."""
        for value in values:
            mesh = getattr(getattr(self.concrete(value), "sharding", None), "mesh", None)
            if isinstance(mesh, self.jax.sharding.Mesh):
                return mesh
        return None

    def _emit(self, program: int | str, reads: list[list[Any]], outs: list[Any], named: tuple[str, bool]) -> None:
        if isinstance(program, str):  # not exportable: what it made is known only as values
            self._step({"kind": "break", "why": program, "reads": reads, "made": [self._constant(o) for o in outs]},
                       outs)
        else:
            self._step({"kind": "program", "program": program, "reads": reads, "function": named[0][:300],
                        "own": named[1], "devices": self._devices(outs)}, outs)

    def _devices(self, outs: list[Any]) -> list[int] | None:
        """The program's devices in its own order (what its shardings' device indices mean),
        read off what it made."""
        for out in outs:
            assignment = getattr(getattr(self.concrete(out), "sharding", None), "_device_assignment", None)
            if assignment:
                return [int(d.id) for d in assignment]
        return None

    def _spec(self, value: Any, placed: Any = None) -> Any:
        """What a program reads: the value's shape and type, and where the program took it in
        (``placed``: as XLA compiled it), else where the value was, if it was committed there."""
        value = self.concrete(value)
        sharding = placed if placed is not None else getattr(value, "sharding", None)
        return self.jax.ShapeDtypeStruct(self.np.shape(value), self.jax.numpy.result_type(value),
                                         sharding=sharding if placed is not None or getattr(value, "committed", True)
                                         else None)

    def _export(self, run: Callable[..., Any], avals: list[Any], program: Any = None) -> int | str:
        """The program's index in ``programs``, or why it cannot be exported (``program``, the
        jaxpr ``run`` binds: one that uses a host callback's result cannot)."""
        jax = self.jax
        used = read_callbacks(program) if program is not None else []
        if used:
            return f"a program uses the result of a host callback ({used[0]})"[:300]
        try:
            shardings = tuple(a.sharding for a in avals)
            jitted = jax.jit(run, in_shardings=shardings) if all(s is not None for s in shardings) else jax.jit(run)
            data = base64.b64encode(bytes(jax.export.export(jitted)(*avals).serialize())).decode("ascii")
        except Exception as error:  # noqa: BLE001 (a host callback, a custom call: a break in the dataflow)
            return f"{type(error).__name__}: {error}"[:300]
        self.size += len(data)
        self.programs.append({"b64": data})
        return len(self.programs) - 1


def _batched(value: Any) -> bool:
    """Whether ``value`` is, or wraps (a JVP's primal of one), an eager vmap's tracer: an
    operation on it stands for one example, not for the arrays it ran on."""
    for _ in range(16):
        if type(value).__name__ == "BatchTracer":
            return True
        inner = getattr(value, "primal", None)
        if inner is None or inner is value:
            return False
        value = inner
    return False


def _compiled_in_shardings(event: tuple[Any, ...], count: int) -> tuple[Any, ...] | None:
    """Where the executable a jit event ran (a full record keeps it) took in each of its ``count``
    arguments, as XLA compiled it: an uncommitted argument of a program whose inputs JAX left to
    the compiler (a shard_map inside a jit) arrives split, not whole. None where that cannot be
    read one for one (constants hoisted into arguments, arguments the program drops)."""
    executable = event[6] if len(event) > 6 else None
    shardings = getattr(executable, "_in_shardings", None)
    kept = getattr(executable, "_kept_var_idx", None)
    if shardings is None or kept is None or len(shardings) != count or sorted(kept) != list(range(count)):
        return None
    return tuple(shardings)


def _jit_primitive() -> Any:
    from jax._src import pjit
    return getattr(pjit, "jit_p", None) or pjit.pjit_p
