"""A submission's program, as data, with the dataflow questions checks ask.

Built in the grader's process from what the child sent: the program ``jax.make_jaxpr``
traced, or the program a real call ran (``grader.child.recorder``); both have the same
shape (see ``grader.child.jaxpr_graph``). Inputs are the argument leaves, named by path
(``x``, ``params['dense']['kernel']``); outputs are the returned leaves (``result``,
``result['w']``). "May derive" is conservative: control flow links everything it reads to
everything it writes, so a "does not derive" answer is certain and a "derives" answer is at
least plausible; an operation that treats its operands apart (``PER_OPERAND``) links each
output to its own operand only. :meth:`Program.from_data` checks every field: the data came
from a process the submission ran in, and malformed data is the submission's failure, not the
grader's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from grader.arguments import is_within


# The operations that give a value inside a program the sharding a parameter names, as a
# constraint: jax.lax.with_sharding_constraint, and jax.sharding.reshard (the same step where
# mesh axes are Explicit: JAX's current docs gather a split array so, with reshard to P()).
CONSTRAINING = {"sharding_constraint": "sharding", "reshard": "dst_sharding"}

# JAX binds some operations under other primitive names, by version and by shard_map's
# check_vma (a psum is ``psum_invariant`` under the default check_vma): each of those names, and
# the operation as a student writes it, which checks and predicates go by.
MEANING = {"psum_invariant": "psum", "psum2": "psum", "all_gather_invariant": "all_gather",
           "reduce_scatter": "psum_scatter"}


def primitives_for(operation: str) -> tuple[str, ...]:
    """The primitive names that mean ``operation`` (``psum``: psum, psum_invariant, psum2)."""
    return (operation, *(name for name, meant in MEANING.items() if meant == operation))


@dataclass(frozen=True)
class Node:
    """One operation: ``primitive`` as JAX bound it, what it reads and writes (value ids),
    its ``params``, the transformations it is ``within``, its scalar ``literals`` by operand
    position; ``inlined``: a call (jit, shard_map, a scan) whose body's nodes stand in for it;
    ``input_avals``: the shape and dtype of each operand as it read them, where that is not the
    value's own (inside a shard_map body, each device's block of a value from outside)."""
    primitive: str
    inputs: tuple[int | None, ...]
    outputs: tuple[int | None, ...]
    params: dict[str, Any]
    within: tuple[str, ...]
    inlined: bool = False
    literals: dict[int, Any] | None = None
    input_avals: tuple[dict[str, Any], ...] | None = None

    @property
    def operation(self) -> str:
        """The operation by meaning, as a student writes it: ``psum`` for ``psum_invariant``."""
        return MEANING.get(self.primitive, self.primitive)


@dataclass(frozen=True)
class Buffers:
    """An array the call really held: its sharding as reported, and each device buffer."""
    sharding: dict[str, Any]
    buffers: tuple[tuple[int, tuple[int, ...], str], ...]  # (device, shape, digest)


def _ids(values: Any) -> tuple[int | None, ...]:
    if not isinstance(values, list):
        raise ValueError("a list of value ids was expected")
    return tuple(None if v is None else _int(v) for v in values)


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"an integer was expected, not {type(value).__name__}")
    return value


def _aval(value: Any) -> dict[str, Any]:
    """A value's shape and dtype as data: ``{"shape": (8, 4), "dtype": "bfloat16"}``."""
    if not isinstance(value, dict) or not isinstance(value.get("dtype", ""), str):
        raise ValueError("a value's aval must be an object with a dtype name")
    return {"shape": tuple(_int(s) for s in value.get("shape", ())), "dtype": value.get("dtype", "")}


def _strings(values: Any) -> tuple[str, ...]:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ValueError("a list of strings was expected")
    return tuple(values)


# Operations that treat each operand apart, the i-th output made from the i-th operand alone:
# ``jax.device_put((q, k, v), s)`` places three arrays, and k is not computed from q. JAX binds
# them with one operand per output (a collective of a tuple or pytree, the same parameters for
# all); every other operation may mix all its operands into each output.
PER_OPERAND = frozenset({"device_put", "copy", "copy_p", "psum", "psum_invariant", "psum2", "pmax", "pmin",
                         "ppermute", "all_gather", "all_gather_invariant", "all_to_all", "reduce_scatter",
                         "psum_scatter", "pvary", "pbroadcast", "optimization_barrier"})


def node_outputs_from(node: Node, reached: set[int]) -> tuple[int | None, ...]:
    """The outputs of ``node`` that may be computed from a value in ``reached``."""
    if node.primitive in PER_OPERAND and len(node.inputs) == len(node.outputs):
        return tuple(o for i, o in zip(node.inputs, node.outputs) if i in reached)
    return node.outputs if reached.intersection(node.inputs) else ()


REPLAYED = ("changed", "still", "unchanged")  # what a replay says of a leaf, the strongest first


@dataclass(frozen=True)
class Program:
    inputs: tuple[int, ...]
    outputs: tuple[int | None, ...]
    nodes: tuple[Node, ...]
    shapes: dict[int, tuple[int, ...]]
    input_paths: tuple[str, ...] = ()
    output_paths: tuple[str, ...] = ()
    arrays: dict[int, Buffers] | None = None  # a real call's placed and returned arrays
    # A real call's replays (grader.child.replay): for the node of an argument placed eagerly,
    # what became of each returned leaf (by path) when that placed value held other values:
    # "changed", "still" (changed, but not moved by it at the call's own values), "unchanged"
    follows: dict[int, dict[str, str]] | None = None
    dtypes: dict[int, str] | None = None  # by value id: "float32", "bfloat16"

    @classmethod
    def from_data(cls, data: Any) -> "Program":
        """Raises ValueError when ``data`` is not a well-formed program."""
        if not isinstance(data, dict):
            raise ValueError("a program must be an object")
        nodes = []
        for n in data.get("nodes", ()):
            if not isinstance(n, dict) or not isinstance(n.get("primitive"), str):
                raise ValueError("a program node must be an object with a primitive name")
            params, literals = n.get("params", {}), n.get("literals")
            if not isinstance(params, dict) or not (literals is None or isinstance(literals, dict)):
                raise ValueError("a node's params must be an object")
            avals = n.get("input_avals")
            if avals is not None and not (isinstance(avals, list) and all(isinstance(a, dict) for a in avals)):
                raise ValueError("a node's input_avals must be a list of objects")
            nodes.append(Node(n["primitive"], _ids(n.get("inputs", [])), _ids(n.get("outputs", [])), params,
                              _strings(n.get("within", [])), bool(n.get("inlined")),
                              {int(k): v for k, v in literals.items()} if literals else None,
                              None if avals is None else tuple(_aval(a) for a in avals)))
        avals = data.get("avals", {})
        if not isinstance(avals, dict):
            raise ValueError("avals must be an object")
        shapes = {int(k): _aval(v)["shape"] for k, v in avals.items()}
        dtypes = {int(k): _aval(v)["dtype"] for k, v in avals.items()}
        arrays = None
        if "arrays" in data:
            arrays = {}
            for key, found in dict(data["arrays"]).items():
                buffers = tuple((_int(b["device"]), tuple(_int(s) for s in b["shape"]), str(b["digest"]))
                                for b in found["buffers"])
                if not isinstance(found["sharding"], dict):
                    raise ValueError("an array's sharding must be an object")
                arrays[int(key)] = Buffers(found["sharding"], buffers)
        inputs, outputs = _ids(data.get("inputs", [])), _ids(data.get("outputs", []))
        input_paths, output_paths = _strings(data.get("input_paths", [])), _strings(data.get("output_paths", []))
        if None in inputs or len(input_paths) != len(inputs) or len(output_paths) != len(outputs):
            raise ValueError("a program's inputs and outputs must match their paths")
        follows = None
        if "follows" in data:
            found = data["follows"]
            if not isinstance(found, dict) or not all(
                    isinstance(v, dict) and all(c in REPLAYED for c in v.values()) for v in found.values()):
                raise ValueError("a program's replays must map nodes to what became of each leaf")
            follows = {int(node): {str(path): changed for path, changed in leaves.items()}
                       for node, leaves in found.items()}
        return cls(inputs, outputs, tuple(nodes), shapes, input_paths, output_paths, arrays,  # type: ignore[arg-type]
                   follows, dtypes)

    def outputs_of(self, result: str = "result") -> list[tuple[str, int | None]]:
        return [(p, i) for p, i in zip(self.output_paths, self.outputs) if is_within(p, result)]

    def derived_from(self, sources: Iterable[int]) -> set[int]:
        """Every value that may be computed from any of ``sources`` (including themselves)."""
        reached = set(sources)
        changed = True
        while changed:  # nodes are in program order, but synthetic links can point backward
            changed = False
            for node in self.nodes:
                if node.inlined or not reached.intersection(node.inputs):
                    continue
                new = {o for o in node_outputs_from(node, reached) if o is not None} - reached
                if new:
                    reached |= new
                    changed = True
        return reached

    def replayed(self, placed: int, result: str = "result") -> str | None:
        """What became of the returned leaves under ``result`` when the placed value ``placed``
        held other values, the call's recorded operations run again: "changed" when any leaf
        follows it, else "still" when one changed without following it at the call's values,
        else "unchanged" (None: no replay of it)."""
        changed = (self.follows or {}).get(placed)
        under = {c for path, c in (changed or {}).items() if is_within(path, result)}
        return next((c for c in REPLAYED if c in under), None)

    def feeds(self, value: int, result: str = "result") -> bool:
        """Whether any returned leaf under ``result`` may be computed from ``value``."""
        reached = self.derived_from([value])
        return any(o in reached for _, o in self.outputs_of(result) if o is not None)

    def primitives(self) -> set[str]:
        return {n.primitive for n in self.nodes}

    def all_placements(self) -> list["ProgramPlacement"]:
        """Every value the program gives a sharding to, by each of the ways JAX offers
        (see ``VIAS``). ``source`` is the value placed, ``placed`` the value that carries the
        sharding; jit and shard_map are inlined, so for them the two are the same id."""
        found: list[ProgramPlacement] = []
        for node in self.nodes:
            name, params = node.primitive, node.params
            if name == "device_put":
                targets = params.get("devices") or [{"type": "default"}] * len(node.inputs)
                found.extend(ProgramPlacement("device_put", i, o, t, node.within)
                             for i, o, t in zip(node.inputs, node.outputs, targets) if isinstance(t, dict))
            elif name in CONSTRAINING and isinstance(params.get(CONSTRAINING[name]), dict):
                found.append(ProgramPlacement("constraint", node.inputs[0], node.outputs[0],
                                              params[CONSTRAINING[name]], node.within, name))
            elif name in ("jit", "pjit"):
                for via, key, values in (("jit_in", "in_shardings", node.inputs),
                                         ("jit_out", "out_shardings", node.outputs)):
                    found.extend(ProgramPlacement(via, v, v, t, node.within)
                                 for v, t in zip(values, params.get(key) or ())
                                 if isinstance(t, dict) and t.get("type") != "unspecified")
            elif name == "shard_map" and isinstance(params.get("mesh"), dict):
                mesh = {k: v for k, v in params["mesh"].items() if k != "type"}
                for via, key, values in (("shard_map_in", "in_specs", node.inputs),
                                         ("shard_map_out", "out_specs", node.outputs)):
                    specs = params.get(key) or ()
                    # A body that closes over constants reads them first: specs align with the last inputs.
                    found.extend(ProgramPlacement(via, v, v, {"type": "NamedSharding", **mesh, "spec": spec},
                                                  node.within)
                                 for v, spec in zip(list(values)[len(values) - len(specs):], specs)
                                 if isinstance(spec, list))
        return found

    def uses(self, operation: str) -> list[Node]:
        """The nodes of ``operation``, by its primitive's name or by meaning (``uses("psum")``
        finds a ``psum_invariant``; a pmean is a psum divided, found as ``psum``)."""
        return [n for n in self.nodes if n.primitive == operation or n.operation == operation]

    def read_shapes(self, node: Node) -> list[tuple[int, ...] | None]:
        """The shape of each of ``node``'s operands as it reads it: inside a shard_map body, each
        device's block of a value from outside; None for a literal."""
        if node.input_avals is not None:
            return [a["shape"] for a in node.input_avals]
        return [None if i is None else self.shapes.get(i) for i in node.inputs]

    def consumers(self, value: int) -> list[Node]:
        return [n for n in self.nodes if value in n.inputs and not n.inlined]


# The ways a program gives a value a sharding, as ``ProgramPlacement.via`` names them.
VIAS = ("device_put", "jit_in", "jit_out", "constraint", "shard_map_in", "shard_map_out")


@dataclass(frozen=True)
class ProgramPlacement:
    via: str
    source: int | None
    placed: int | None
    sharding: dict[str, Any]
    within: tuple[str, ...]
    primitive: str = ""  # what placed it, where one via has several (a constraint: sharding_constraint or reshard)
