"""An account run again (in the witness process): its steps in order, on the grader's own
arguments, each program compiled here from the account's StableHLO and read here.

Two answers, told apart because only one may take points: the outputs the account computes
(the parent compares them with what the call returned), or an ``Unverifiable`` account (this
witness does not run what it describes: a sharding or step of a kind it does not know, a program
beyond its bounds, one that calls native code, one that does not run here). The second is no
verdict either way, never an accusation, and never a pass: the checks resting on it fail.

The witness runs nothing native that an account chooses: XLA compiles the program's own
operations, and of custom calls only JAX's sharding annotations and memory moves are run.
LAPACK, DUCC and host callbacks are kernels a program names with buffer shapes it declares
itself (a pivot buffer declared one element long for 1024 pivots corrupts the heap of whatever
runs it), so a program calling one is never compiled here.
"""
from __future__ import annotations

import base64
import hashlib
import re
from collections import OrderedDict
from typing import Any

from grader.errors import Unverifiable
from grader.witness.manual import manual_shardings, on_devices

# The StableHLO custom calls the witness runs: JAX's own sharding annotations and memory moves,
# which XLA itself rewrites away. Exactly these: any other target makes the program unverifiable.
ALLOWED_TARGETS = frozenset({"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement",
                             "MoveToHost", "MoveToDevice", "LayoutConstraint"})
_TARGET = re.compile(r'(?:custom_call\s+@|call_target_name\s*=\s*")([\w.$-]+)')
# What a program may be before the witness parses it (its serialization) and before it compiles
# it (its operations, how deeply its regions nest, the elements of its constants): what a call of
# an exercise runs is far inside these, and beyond them the parser or the compiler is the target.
MAX_PROGRAM_BYTES = 4 << 20
MAX_OPERATIONS = 20_000
MAX_NESTING = 32
MAX_CONSTANT_ELEMENTS = 16 << 20
_CONSTANT = re.compile(r"stablehlo\.constant\b.*:\s*tensor<([0-9x?]*)[a-z]")
MAX_COMPILED = 64  # distinct programs of one account
MAX_HELD = 1024  # arrays held between programs, reported
MAX_BLOCKS = 64  # devices named in where one array lives
# What this process compiled, by a program's serialization and how its inputs are placed, the
# most recently used last: the replays after a call compile nothing again (the same bytes are
# the same program). A witness serves one grading (grader.sandbox.witness): none of this outlives
# the submission whose accounts made it. Bounded: each holds an executable.
_MADE: OrderedDict[tuple[str, tuple[str, ...]], tuple[Any, dict[str, Any]]] = OrderedDict()
_DESERIALIZED: OrderedDict[str, tuple[Any, list[dict[str, Any]] | None]] = OrderedDict()
MAX_MADE = 128
# The trip counts of a program's loops at the integer scalars it was given (``_Run._loops_on``),
# by the program's serialization, those values and its inputs' placement.
_TRIPS: OrderedDict[tuple[str, tuple[tuple[int, int], ...], tuple[str, ...]], list[int | None]] = OrderedDict()


def skip_lapack_registration() -> None:
    """JAX registers the CPU's LAPACK kernels (importing SciPy's LAPACK, about 0.1 s of CPU)
    before it lowers any exported program for the CPU. The witness never runs a program that
    calls one (``ALLOWED_TARGETS``), so it never registers them. A JAX without that step (0.9)
    registers them otherwise, and nothing is changed there."""
    from jax._src.export import _export
    if hasattr(_export, "_ensure_backends_initialized"):
        _export._ensure_backends_initialized = lambda platforms: None


def bounded(module: str) -> str | None:
    """Why the program text ``module`` is beyond what the witness compiles, or None."""
    lines = module.count("\n")
    if lines > MAX_OPERATIONS:
        return f"it has more than {MAX_OPERATIONS:,} operations"
    depth = deepest = 0
    for line in module.splitlines():
        depth += line.count("{") - line.count("}")
        deepest = max(deepest, depth)
    if deepest > MAX_NESTING:
        return f"its regions nest more than {MAX_NESTING} deep"
    elements = 0
    for shape in _CONSTANT.findall(module):
        count = 1
        for size in filter(None, shape.split("x")):
            count *= int(size) if size.isdigit() else 0
        elements += count
    if elements > MAX_CONSTANT_ELEMENTS:
        return f"its constants hold more than {MAX_CONSTANT_ELEMENTS:,} elements"
    return None


def rerun(account: Any, named: Any, substitute: Any = None) -> dict[str, Any]:
    """The account's outputs on the arguments ``named`` (as the child is sent them), and what
    XLA made of each program; with ``substitute`` (``{"arg": i, "sharding": described,
    "value": array}``), every eager placement of argument leaf ``i`` onto that sharding places
    ``value`` instead: the call's own operations, run again with the placed copy holding other
    values, the argument itself unchanged."""
    import jax
    import numpy as np
    if isinstance(account, dict) and set(account) == {"error"} and isinstance(account["error"], str):
        return {"ok": False, "unverifiable": account["error"][:300]}  # the child could not build one
    try:
        arguments = _arguments(jax, named)
    except (Unverifiable, KeyError, TypeError, ValueError) as error:
        return {"ok": False, "unverifiable": f"the arguments: {type(error).__name__}: {error}"[:500]}
    problem = malformed(account, len(arguments))
    if problem is not None:
        return {"ok": False, "malformed": problem}
    try:
        return _Run(jax, np, account).run(arguments, substitute)
    except (Unverifiable, KeyError, IndexError, TypeError, ValueError) as error:
        return {"ok": False, "unverifiable": f"{type(error).__name__}: {error}"[:500]}


STEP_KINDS = ("place", "program", "break")


def malformed(account: Any, arguments: int) -> str | None:
    """What makes ``account`` no account ``grader.child.account`` writes, or None: every step of
    a known kind, every reference to an argument, an earlier step, a constant or a program that
    exists. The child never writes such an account, so one is an account edited in the child."""
    if not isinstance(account, dict):
        return "no account of the call was handed over"
    steps, programs, constants, outputs = (account.get(k) for k in ("steps", "programs", "constants", "outputs"))
    if not all(isinstance(v, list) for v in (steps, programs, constants, outputs)):
        return "its steps, programs, constants and outputs are not lists"
    if not all(isinstance(p, dict) and isinstance(p.get("b64"), str) for p in programs):
        return "a program is not a serialization"
    if not all(isinstance(c, dict) and isinstance(c.get("array"), dict) and isinstance(c.get("sharding"), dict)
               for c in constants):
        return "a constant is not an array with its sharding"

    def bad(ref: Any, before: int) -> bool:
        if not isinstance(ref, list) or not ref:
            return True
        kind, rest = ref[0], ref[1:]
        if kind == "literal":
            return len(rest) != 1 or type(rest[0]) not in (bool, int, float)
        if not rest or not all(type(i) is int and i >= 0 for i in rest):
            return True
        limit = {"arg": arguments, "constant": len(constants), "step": before}.get(kind)
        return limit is None or rest[0] >= limit or len(rest) != (2 if kind == "step" else 1)

    for index, step in enumerate(steps):
        if not isinstance(step, dict) or step.get("kind") not in STEP_KINDS or not isinstance(step.get("reads"), list):
            return f"step {index} is of no known kind"
        if any(bad(ref, index) for ref in step["reads"]):
            return f"step {index} reads a value no earlier step, argument or constant holds"
        if step["kind"] == "place" and (len(step["reads"]) != 1 or not isinstance(step.get("sharding"), dict)):
            return f"step {index} places other than one value onto a sharding"
        if step["kind"] == "program" and not (type(step.get("program")) is int and 0 <= step["program"] < len(programs)):
            return f"step {index} runs a program the account does not hold"
        if step["kind"] == "break" and not (isinstance(step.get("made"), list) and all(
                isinstance(c, dict) and isinstance(c.get("array"), dict) and isinstance(c.get("sharding"), dict)
                for c in step["made"])):
            return f"step {index} makes values that are not arrays"
    if any(bad(ref, len(steps)) for ref in outputs):
        return "an output is a value no step, argument or constant holds"
    kept = account.get("kept", [])
    if not (isinstance(kept, list) and all(
            isinstance(k, dict) and isinstance(k.get("shape"), list) and isinstance(k.get("dtype"), str)
            and isinstance(k.get("sharding"), dict) and all(type(n) is int and n >= 0 for n in k["shape"])
            for k in kept)):
        return "what it says the call kept alive is not shapes with their shardings"
    return None


def _arguments(jax: Any, named: Any) -> list[Any]:
    """The argument leaves, as the child builds and flattens them (``grader.child.server``)."""
    from grader.wire import decode_array

    def build(encoded: dict[str, Any]) -> Any:
        kind = encoded["kind"]
        if kind == "array":
            return jax.device_put(decode_array(encoded))
        if kind in ("int", "float", "bool"):
            return {"int": int, "float": float, "bool": bool}[kind](encoded["value"])
        if kind == "key":
            return jax.random.key(int(encoded["seed"]))
        if kind == "dict":
            return {str(k): build(v) for k, v in encoded["items"]}
        if kind in ("tuple", "list"):
            items = [build(v) for v in encoded["items"]]
            return tuple(items) if kind == "tuple" else items
        if kind == "none":
            return None
        raise Unverifiable(f"an argument of kind {kind!r}")
    return [leaf for _, encoded in named for leaf in jax.tree_util.tree_leaves(build(encoded))]


class _Run:
    def __init__(self, jax: Any, np: Any, account: dict[str, Any]) -> None:
        self.jax, self.np, self.account = jax, np, account
        # program index -> (digest, deserialized, its shard_maps' input shardings)
        self.exported: dict[int, tuple[str, Any, list[dict[str, Any]] | None]] = {}
        self.compiled: set[tuple[str, tuple[str, ...]]] = set()
        self.facts: dict[int, dict[str, Any]] = {}  # program index -> ProgramData, in the order first run

    def run(self, arguments: list[Any], substitute: Any = None) -> dict[str, Any]:
        from grader.wire import decode_array
        values: dict[tuple[Any, ...], Any] = {("arg", i): v for i, v in enumerate(arguments)}
        swapped = 0
        constants = self.account.get("constants", [])
        breaks = []
        held: list[dict[str, Any]] = []  # every array the call held between its programs
        placed: list[dict[str, Any]] = []  # where each place step put its value, read off what it made
        self.ran: list[dict[str, Any]] = []  # where each program step took its inputs and left its outputs
        beside = self.jax.devices()[0]  # where _arguments puts each argument, uncommitted

        def read(ref: list[Any]) -> Any:
            if ref[0] == "literal":
                return ref[1]
            if ref[0] == "constant":
                return self._constant(constants[int(ref[1])])
            key = tuple(ref)
            if key not in values:
                raise Unverifiable(f"a step reads {ref!r}, which nothing before it made")
            return values[key]

        for index, step in enumerate(self.account["steps"]):
            reads = [read(r) for r in step["reads"]]
            held.extend(_held(r, v, index, beside) for r, v in zip(step["reads"], reads) if r[0] == "constant"
                        and constants[int(r[1])]["sharding"].get("type") != "default")
            if step["kind"] == "place":
                value = reads[0]
                if substitute is not None and step["reads"] == [["arg", substitute["arg"]]] \
                        and step["sharding"] == substitute["sharding"]:
                    value, swapped = decode_array(substitute["value"]), swapped + 1
                outs = [self.jax.device_put(value, self._sharding(step["sharding"]))]
                placed.append({"step": index, **self._where(outs[0])})
            elif step["kind"] == "program":
                outs = self._program(index, step, reads)
            elif step["kind"] == "break":
                breaks.append(str(step.get("why", ""))[:300])
                outs = [self._constant(made) for made in step["made"]]
            else:
                raise Unverifiable(f"a step of kind {step['kind']!r}")
            for k, out in enumerate(outs):
                values[("step", index, k)] = out
                held.append(_held(["step", index, k], out, index, beside))
        from grader.wire import WIDENED, encode_array
        outputs, where = [], []
        for ref in self.account["outputs"]:
            value = read(ref)
            where.append(self._where(value) if hasattr(value, "addressable_shards") else None)
            array = self.np.asarray(value)
            if array.dtype.name in WIDENED:  # as the child sends a narrow type: its numbers, widened
                array = array.astype(WIDENED[array.dtype.name])
            outputs.append(encode_array(array) if array.dtype.kind in "biufc" else None)
        held.extend(self._kept(index, kept, beside) for index, kept in enumerate(self.account.get("kept", [])))
        unique = {tuple(h["ref"]): h for h in held if h is not None}  # a constant read twice is one array
        return {"ok": True, "outputs": outputs, "programs": list(self.facts.values()), "breaks": breaks,
                "swapped": swapped, "held": list(unique.values())[:MAX_HELD], "placed": placed,
                "output_shardings": where, "memory_kind": _default_memory_kind(beside), "ran": self.ran}

    def _where(self, array: Any) -> dict[str, Any]:
        """Where an array the witness made lives (``_laid``)."""
        return self._laid(array.sharding, tuple(array.shape))

    def _laid(self, sharding: Any, shape: tuple[int, ...]) -> dict[str, Any]:
        """Where an array of ``shape`` on ``sharding`` lives: the sharding, described as the child
        describes one (``grader.child.sharding_data``), and the block of it each device holds."""
        from grader.child.sharding_data import describe_sharding
        blocks = [[int(device.id), [list(s.indices(n)[:2]) for s, n in zip(index, shape)]]
                  for device, index in sorted(sharding.devices_indices_map(shape).items(),
                                              key=lambda item: item[0].id)]
        return {"sharding": describe_sharding(sharding, self.jax.Device, self.jax.sharding.NamedSharding),
                "blocks": blocks[:MAX_BLOCKS]}

    def _program(self, at: int, step: dict[str, Any], reads: list[Any]) -> list[Any]:
        index = int(step["program"])
        digest, exported, manual = self._exported(index)
        grid = self._grid(exported, step.get("devices"))
        taken = self._taken(exported, grid, reads)
        reads = self._placed_for(exported, grid, reads)
        key = (digest, tuple(str(getattr(r, "sharding", None)) for r in reads))
        if key not in self.compiled and len(self.compiled) == MAX_COMPILED:
            raise Unverifiable(f"more than {MAX_COMPILED} distinct programs")
        self.compiled.add(key)
        if key in _MADE:
            _MADE.move_to_end(key)
        else:
            try:
                executable = self.jax.jit(exported.call).lower(*reads).compile()
            except Exception as error:  # noqa: BLE001 (what does not compile here says nothing either way)
                raise Unverifiable(f"a program does not compile here: {type(error).__name__}: {error}") from None
            _MADE[key] = (executable, _facts(executable))
            while len(_MADE) > MAX_MADE:
                _MADE.popitem(last=False)
        executable, facts = _MADE[key]
        if index not in self.facts:
            self.facts[index] = {"name": str(step.get("function", ""))[:200],
                                 "function": str(step.get("function", ""))[:300], "own": step.get("own") is True,
                                 "runs": 0, **facts}
            if None in facts["loops"]:
                self.facts[index]["loops"] = self._loops_on(digest, exported, reads) or facts["loops"]
        self.facts[index]["runs"] += 1
        outs = executable(*reads)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        if len(self.ran) < MAX_HELD:
            self.ran.append({"step": at, "inputs": taken,
                             "outputs": [self._where(o) if hasattr(o, "addressable_shards") else None for o in outs],
                             "manual": on_devices(manual, step.get("devices"))})
        return outs

    def _grid(self, exported: Any, devices: Any) -> Any:
        """The program's devices in its order (the step's ``devices``), or None where they are
        not as many as the program runs on."""
        if not isinstance(devices, list) or len(devices) != exported.nr_devices:
            return None
        known = {d.id: d for d in self.jax.devices()}
        return self.np.array([known[int(i)] for i in devices], dtype=object)

    def _taken(self, exported: Any, grid: Any, reads: list[Any]) -> list[dict[str, Any] | None]:
        """Where the program takes each of its inputs: as its own in_shardings say, on its devices
        ``grid``, where it names them (a jit's in_shardings, or what XLA compiled for it); else
        where the value is committed (jit takes it there). None otherwise: an uncommitted value
        the witness places as it likes (``_placed_for``) says nothing of where the call took it."""
        named = exported._in_named_shardings if getattr(exported, "_has_named_shardings", False) else None
        taken: list[dict[str, Any] | None] = []
        for index, value in enumerate(reads):
            shape = tuple(self.np.shape(value))
            specified = (named is not None and named[index] is not None) or exported.in_shardings_hlo[index] is not None
            if grid is not None and specified:
                taken.append(self._laid(self._wanted(exported, index, grid), shape))
            else:
                taken.append(self._where(value) if getattr(value, "committed", False) else None)
        return taken

    def _kept(self, index: int, kept: dict[str, Any], beside: Any) -> dict[str, Any] | None:
        """An array the call made, kept alive and no step read, from its shape and sharding alone:
        the bytes of its largest block, where its sharding and type are ones the witness rebuilds
        (None elsewhere: an array it cannot lay out is not counted, and the rest still is)."""
        shape = tuple(int(n) for n in kept["shape"])
        try:
            sharding = self._sharding(kept["sharding"])
            itemsize = int(self.np.dtype(kept["dtype"]).itemsize)
            block = sharding.shard_shape(shape) if sharding is not None else None
        except (Unverifiable, KeyError, IndexError, TypeError, ValueError):
            return None
        if block is None:
            return None
        devices = sorted(sharding.device_set, key=lambda d: d.id)
        return {"ref": ["kept", index], "step": len(self.account["steps"]), "shape": list(shape), "itemsize": itemsize,
                "most": int(self.np.prod(block, dtype=int)) * itemsize, "devices": len(devices),
                "beside_arguments": devices == [beside]}

    def _loops_on(self, digest: str, exported: Any, reads: list[Any]) -> list[int | None] | None:
        """The trip counts of the program's while loops on these very values: its integer scalar
        inputs (a ``fori_loop`` bound passed in traced) made constants of a compilation read for
        its loops alone, so XLA counts the steps the call ran; None where it has no such input."""
        fixed = {i: self.np.asarray(r) for i, r in enumerate(reads)
                 if self.np.ndim(r) == 0 and self.np.asarray(r).dtype.kind in "iu"}
        if not fixed:
            return None
        key = (digest, tuple((i, v.item()) for i, v in fixed.items()),
               tuple(str(getattr(r, "sharding", None)) for r in reads))
        if key in _TRIPS:
            _TRIPS.move_to_end(key)
            return _TRIPS[key]

        from grader.child.compiled import loops_run_once

        def call(*rest: Any) -> Any:
            given = iter(rest)
            return exported.call(*(fixed[i] if i in fixed else next(given) for i in range(len(reads))))
        try:
            text = self.jax.jit(call).lower(*(r for i, r in enumerate(reads) if i not in fixed)).compile().as_text()
        except Exception:  # noqa: BLE001 (what does not compile so says nothing: the loops stay unknown)
            return None
        _TRIPS[key] = loops_run_once(text)
        while len(_TRIPS) > MAX_MADE:
            _TRIPS.popitem(last=False)
        return _TRIPS[key]

    def _placed_for(self, exported: Any, grid: Any, reads: list[Any]) -> list[Any]:
        """The values a program reads, on its devices ``grid`` as its own shardings ask (replicated
        where it leaves them to the caller), as jit placed them in the call: an argument arrives
        uncommitted on the default device."""
        if exported.nr_devices == 1 or grid is None:
            return reads
        placed = []
        for index, value in enumerate(reads):
            current = getattr(value, "sharding", None)
            if current is None or len(current.device_set) != exported.nr_devices:
                value = self.jax.device_put(value, self._wanted(exported, index, grid))
            placed.append(value)
        return placed

    def _wanted(self, exported: Any, index: int, grid: Any) -> Any:
        """Where the program wants its ``index``-th input, on the devices ``grid`` in its order."""
        sharding = self.jax.sharding
        named = exported._in_named_shardings[index] if getattr(exported, "_has_named_shardings", False) else None
        if named is not None and self.np.prod(named.mesh.axis_sizes, dtype=int) == grid.size:
            # its abstract mesh, made concrete on the program's devices (an older JAX may name an
            # empty one for a replicated input: then the HLO sharding says where it goes)
            abstract = named.mesh
            mesh = sharding.Mesh(grid.reshape(abstract.axis_sizes), abstract.axis_names,
                                 axis_types=abstract.axis_types)
            return named.update(mesh=mesh)
        flat = sharding.Mesh(grid, ("witness",))
        if exported.in_shardings_hlo[index] is None or named is not None:
            return sharding.NamedSharding(flat, sharding.PartitionSpec())
        return exported.in_shardings_jax(flat)[index]

    def _exported(self, index: int) -> tuple[str, Any, list[dict[str, Any]] | None]:
        """The ``index``-th program, deserialized and vetted, a digest of its bytes and its
        shard_maps' input shardings (``manual_shardings``)."""
        if index not in self.exported:
            text = self.account["programs"][index]["b64"]
            digest = hashlib.sha256(text.encode("ascii", "replace")).hexdigest()
            if digest not in _DESERIALIZED:
                if len(text) * 3 // 4 > MAX_PROGRAM_BYTES:
                    raise Unverifiable(f"a program's serialization is over {MAX_PROGRAM_BYTES >> 20} MiB")
                exported = self.jax.export.deserialize(bytearray(base64.b64decode(text, validate=True)))
                module = exported.mlir_module()
                beyond = bounded(module)
                if beyond is not None:
                    raise Unverifiable(f"a program is beyond what the grader runs again: {beyond}")
                targets = set(_TARGET.findall(module)) - ALLOWED_TARGETS
                if targets:
                    raise Unverifiable(f"a program calls {', '.join(sorted(targets))}, native code the grader does not "
                                       "run again (of custom calls, it runs JAX's sharding annotations and memory "
                                       "moves alone)")
                _DESERIALIZED[digest] = (exported, manual_shardings(module))
                while len(_DESERIALIZED) > MAX_MADE:
                    _DESERIALIZED.popitem(last=False)
            self.exported[index] = (digest, *_DESERIALIZED[digest])
        return self.exported[index]

    def _constant(self, data: dict[str, Any]) -> Any:
        from grader.wire import decode_array
        array = decode_array(data["array"])
        if "narrow" in data:
            import ml_dtypes
            array = array.astype(getattr(ml_dtypes, str(data["narrow"])))
        return self.jax.device_put(array, self._sharding(data["sharding"]))

    def _sharding(self, described: dict[str, Any]) -> Any:
        """The sharding a description names, on this process's devices (the same ids)."""
        jax, np = self.jax, self.np
        devices = {d.id: d for d in jax.devices()}
        kind = described.get("type")
        if kind == "default":
            return None
        if kind in ("Device", "SingleDeviceSharding") and len(described.get("devices") or ()) == 1:
            return jax.sharding.SingleDeviceSharding(devices[int(described["devices"][0])],
                                                     memory_kind=described.get("memory_kind"))
        if kind == "NamedSharding" and described.get("mesh_devices") is not None:
            grid = np.array([devices[int(i)] for i in described["mesh_devices"]], dtype=object)
            names = tuple(str(a) for a in described["axis_names"])
            types = described.get("axis_types")
            kwargs = {}
            if types:
                kwargs["axis_types"] = tuple(getattr(jax.sharding.AxisType, str(t)) for t in types)
            mesh = jax.sharding.Mesh(grid.reshape([int(n) for n in described["mesh_shape"]]), names, **kwargs)
            spec = jax.sharding.PartitionSpec(*(tuple(p) if isinstance(p, list) else p for p in described["spec"]))
            return jax.sharding.NamedSharding(mesh, spec, memory_kind=described.get("memory_kind"))
        raise Unverifiable(f"a sharding of type {kind!r}")


def _default_memory_kind(device: Any) -> str | None:
    """The memory a sharding that names none places into on ``device`` (``device`` on an
    accelerator, ``unpinned_host`` on some CPU builds), or None where JAX cannot say."""
    try:
        return str(device.default_memory().kind)
    except Exception:  # noqa: BLE001 (a JAX or device without memories: kinds are compared as given)
        return None


def _held(ref: list[Any], value: Any, step: int, beside: Any) -> dict[str, Any] | None:
    """An array the call held between programs (an input a step read that no recorded operation
    made, or a step's output), as placed here: its shape and the most bytes of it one device
    holds, read off its buffers, whichever way the submission made it, and whether it is on the
    one device ``beside`` the arguments arrived on (as the argument itself is); None for what is
    no array."""
    shards = getattr(value, "addressable_shards", None)
    if not shards:
        return None
    return {"ref": [str(ref[0]), *map(int, ref[1:])], "step": step, "shape": [int(n) for n in value.shape],
            "itemsize": int(value.dtype.itemsize), "most": max(int(s.data.nbytes) for s in shards),
            "devices": len(shards), "beside_arguments": len(shards) == 1 and shards[0].device == beside}


def _facts(executable: Any) -> dict[str, Any]:
    """What XLA made of a program compiled here: its collectives (``grader.child.compiled``
    reads HLO text the same way), its loops' trip counts and its memory per device."""
    from grader.child.compiled import collectives, loops_run_once
    stats = executable.memory_analysis()
    text = executable.as_text()
    return {"collectives": collectives(text), "loops": loops_run_once(text),
            "memory": {"argument": int(stats.argument_size_in_bytes), "output": int(stats.output_size_in_bytes),
                       "temp": int(stats.temp_size_in_bytes), "alias": int(stats.alias_size_in_bytes)}}
