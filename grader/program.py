"""The traced program of a submission, as data, with the dataflow questions checks ask.

Built in the grader's process from what the child sent (see ``grader.jaxpr_graph``).
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
        found = []
        for node in self.nodes:
            if node.primitive == "device_put":
                targets = node.params.get("devices") or [{"type": "default"}] * len(node.inputs)
                found.extend(zip(node.inputs, node.outputs, targets))
        return found
