"""``structure``: operations that must run in the same jitted function, as one XLA program.

"Gather the weights, then multiply" is one task whether the gather is a sharding constraint,
a shard_map's ``all_gather`` or a ``device_put``; where it runs is another. Inside the jitted
function that multiplies, XLA schedules the gather with the matmul and frees the gathered
copy after it; in a jitted function of its own, or eagerly, the whole weights live on every
device between two programs. Each operation is present either way, so ``UsesPrimitive`` (even
with ``inside="jit"``) cannot tell: ``SameJit`` asks that they sit in the same call of one of
the submission's own jitted functions (the outermost: a jitted helper called inside another
jitted function is compiled into the caller's program), and, with ``linked``, that each one
feeds the next (the gathered value is what is multiplied).

Where a node sits is read from the recorded program alone (``jit_scopes``): the recorder
writes a call's inner operations just before the call itself, so the call a node is inside
is the first later node no deeper than the call. A jit of JAX's own library (``jnp.dot`` is
one) is no scope here: it is part of whatever calls it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from grader.arguments import Signature
from grader.checks.base import Check, Context
from grader.checks.evidence import WRITTEN
from grader.checks.program_checks import census, names_of, observed_program, spelled
from grader.observe.program import Node, Program
from grader.outcome import Category, Outcome

JITS = ("jit", "pjit")
Operation = str | tuple[str, ...]  # one operation, or alternatives (("sharding_constraint", "all_gather"))


def jit_scopes(program: Program) -> dict[int, int]:
    """For each node inside a jitted function of the submission's own, the index of the node
    of the outermost such call it sits in (nodes outside every one are absent)."""
    scopes: dict[int, int] = {}
    pending: dict[int, list[int]] = {}  # depth of the outermost jit in ``within`` -> nodes waiting for it
    for index, node in enumerate(program.nodes):
        if ":" not in node.primitive:  # not a loop's or call's enter/exit link
            depth = len(node.within)
            for level in [k for k in pending if k >= depth]:
                for waiting in pending.pop(level):
                    scopes[waiting] = index
        level = next((k for k, name in enumerate(node.within) if name in JITS), None)
        if level is not None:
            pending.setdefault(level, []).append(index)
    return scopes


def _text(operation: Operation) -> str:
    names = (operation,) if isinstance(operation, str) else operation
    return " or ".join(WRITTEN.get(n) or spelled(n) for n in names)


def _listed(operations: tuple[Operation, ...]) -> str:
    texts = [_text(o) for o in operations]
    return ", ".join(texts[:-1]) + f" and {texts[-1]}"


def _names(operation: Operation) -> set[str]:
    names = (operation,) if isinstance(operation, str) else operation
    return {alias for name in names for alias in names_of(name)}


@dataclass(frozen=True, kw_only=True)
class SameJit(Check):
    """Each of ``operations`` (a primitive or collective, or a tuple of alternatives) runs in
    the same call of one of the submission's own jitted functions; with ``on_path`` each reads
    a value computed from the arguments and feeds the result, and with ``linked`` each one's
    output reaches the next one's operands (in the order given)."""
    operations: tuple[Operation, ...]
    on_path: bool = True
    linked: bool = False
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        return [] if len(self.operations) >= 2 else [f"{self.id}: SameJit needs at least two operations"]

    def _wanted(self) -> str:
        listed = _listed(self.operations)
        return (f"{listed} in the same jitted function" + (", each feeding the next" if self.linked else "")
                + (", on the way from the arguments to the result" if self.on_path else ""))

    def judge(self, context: Context) -> Outcome:
        program, why = observed_program(context)
        want = self._wanted()
        if program is None:
            return Outcome.failed(f"The program could not be inspected: {why}.", expected=want, observed=str(why))
        scopes = jit_scopes(program)
        reached = program.derived_from(program.inputs)
        found: list[list[int]] = []
        for operation in self.operations:
            names = _names(operation)
            nodes = [i for i, n in enumerate(program.nodes) if n.primitive in names and not n.inlined]
            if self.on_path:
                nodes = [i for i in nodes if self._on_path(program, program.nodes[i], reached)]
            if not nodes:
                where = " on the way from your arguments to the result" if self.on_path else ""
                return Outcome.failed(f"Your program never uses {_text(operation)}{where}. The task asks for {want}.",
                                      expected=want, observed=f"no {_text(operation)}{where} among the program's "
                                                              f"{census(program)}")
            found.append(nodes)
        observed = "; ".join(f"{_text(o)}: {self._where(nodes, scopes, program)}"
                             for o, nodes in zip(self.operations, found))
        eager = [o for o, nodes in zip(self.operations, found) if not any(i in scopes for i in nodes)]
        if eager:
            return Outcome.failed(f"Your {' and '.join(_text(o) for o in eager)} run{'s' * (len(eager) == 1)} outside "
                                  "every jitted function of yours (eagerly, one operation at a time). The task asks "
                                  f"for {want}: one program XLA compiles whole.", expected=want, observed=observed)
        common = set.intersection(*({scopes[i] for i in nodes if i in scopes} for nodes in found))
        if not common:
            return Outcome.failed("Your program runs these operations in different jitted functions (each compiled "
                                  "as a program of its own, with what one hands the next held in full between them). "
                                  f"The task asks for {want}.", expected=want, observed=observed)
        if self.linked:
            linked = [scope for scope in common if self._chained(program, found, scopes, scope)]
            if not linked:
                return Outcome.failed(f"Your jitted function runs {_listed(self.operations)}, but "
                                      "one does not read what the one before it gives: they work on different values."
                                      f" The task asks for {want}.", expected=want, observed=observed)
        return Outcome.passed(f"Your program runs {_listed(self.operations)} in the same jitted "
                              f"function ({observed}).")

    @staticmethod
    def _on_path(program: Program, node: Node, reached: set[int]) -> bool:
        return bool(reached.intersection(i for i in node.inputs if i is not None)) and any(
            program.feeds(o) for o in node.outputs if o is not None)

    @staticmethod
    def _chained(program: Program, found: list[list[int]], scopes: dict[int, int], scope: int) -> bool:
        """Whether, in the call ``scope``, an occurrence of each operation reads a value computed
        from an occurrence of the one before."""
        current = [i for i in found[0] if scopes.get(i) == scope]
        for nodes in found[1:]:
            given = program.derived_from(o for i in current for o in program.nodes[i].outputs if o is not None)
            current = [i for i in nodes if scopes.get(i) == scope
                       and given.intersection(v for v in program.nodes[i].inputs if v is not None)]
            if not current:
                return False
        return True

    @staticmethod
    def _where(nodes: list[int], scopes: dict[int, int], program: Program) -> str:
        """Where an operation's occurrences run: "jitted call 2 (fsdp_step)", "1 eager"; calls are
        numbered in the order they ran, the same for every operation."""
        order = {call: rank for rank, call in enumerate(sorted(set(scopes.values())), 1)}
        parts = []
        for call in sorted({scopes[i] for i in nodes if i in scopes}):
            name = program.nodes[call].params.get("name")
            parts.append(f"jitted call {order[call]}" + (f" ({name})" if isinstance(name, str) else ""))
        outside = sum(1 for i in nodes if i not in scopes)
        if outside:
            parts.append(f"{outside} eager")
        return ", ".join(parts)
