"""The traced program of a submission, as data, with the dataflow questions checks ask.

Built in the grader's process from what the child sent (see ``grader.observe.jaxpr_graph``).
"May derive" is conservative: control flow links everything it reads to everything it
writes, so a "does not derive" answer is certain and a "derives" answer is at least plausible.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True)
class Node:
    primitive: str
    inputs: tuple[int | None, ...]
    outputs: tuple[int | None, ...]
    params: dict[str, Any]
    within: tuple[str, ...]
    inlined: bool = False


@dataclass(frozen=True)
class Program:
    inputs: tuple[int, ...]
    outputs: tuple[int | None, ...]
    nodes: tuple[Node, ...]
    shapes: dict[int, tuple[int, ...]]

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "Program":
        nodes = tuple(Node(str(n["primitive"]), tuple(n.get("inputs", ())), tuple(n.get("outputs", ())),
                           dict(n.get("params", {})), tuple(n.get("within", ())), bool(n.get("inlined")))
                      for n in data.get("nodes", ()))
        shapes = {int(k): tuple(v.get("shape", ())) for k, v in data.get("avals", {}).items()}
        return cls(tuple(data.get("inputs", ())), tuple(data.get("outputs", ())), nodes, shapes)

    def derived_from(self, sources: Iterable[int]) -> set[int]:
        """Every value that may be computed from any of ``sources`` (including themselves)."""
        reached = set(sources)
        changed = True
        while changed:  # nodes are in program order, but synthetic links can point backward
            changed = False
            for node in self.nodes:
                if node.inlined or not reached.intersection(node.inputs):
                    continue
                new = {o for o in node.outputs if o is not None} - reached
                if new:
                    reached |= new
                    changed = True
        return reached

    def primitives(self) -> set[str]:
        return {n.primitive for n in self.nodes}

    def placements(self) -> list[tuple[int | None, int | None, dict[str, Any]]]:
        """(input id, output id, target sharding) for every operand of every device_put."""
        return [(p.source, p.placed, p.sharding) for p in self.all_placements() if p.via == "device_put"]

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
                             for i, o, t in zip(node.inputs, node.outputs, targets))
            elif name == "sharding_constraint" and isinstance(params.get("sharding"), dict):
                found.append(ProgramPlacement("constraint", node.inputs[0], node.outputs[0], params["sharding"],
                                              node.within))
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
                    found.extend(ProgramPlacement(via, v, v, {"type": "NamedSharding", **mesh, "spec": spec},
                                                  node.within)
                                 for v, spec in zip(values, params.get(key) or ()) if isinstance(spec, list))
        return found

    def uses(self, primitive: str) -> list[Node]:
        return [n for n in self.nodes if n.primitive == primitive]


# The ways a program gives a value a sharding, as ``ProgramPlacement.via`` names them.
VIAS = ("device_put", "jit_in", "jit_out", "constraint", "shard_map_in", "shard_map_out")


@dataclass(frozen=True)
class ProgramPlacement:
    via: str
    source: int | None
    placed: int | None
    sharding: dict[str, Any]
    within: tuple[str, ...]
