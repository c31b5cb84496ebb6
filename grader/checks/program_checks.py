"""``structure``: which operations the function's program performs, or must not perform.

A sharded computation is only what the task asks when the program really does it: a sum
over a sharded array that matches ``jnp.sum(x)`` can come from a ``psum`` across devices or
from gathering everything to one place first. These checks read the program the probe call
really ran (``grader.child.recorder``: jitted functions and shard_map bodies included) and
declare, per exercise, which operations must appear (over which mesh axes, inside which
transformation, on the path from the arguments to the result) and which must not.

Collectives are judged by meaning. ``jax.lax.pmean`` traces as a ``psum`` followed by a
division by the axis size, so a psum whose result is divided by the size of its axes (or
multiplied by its inverse) *is* a mean: it satisfies ``operation="pmean"`` and not
``operation="psum"``, and ``pmean(...) * n`` is a mean scaled, not a psum.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import prod
from typing import Any, ClassVar

from grader.arguments import Signature, is_within
from grader.checks.base import Check, Context
from grader.checks.returns import probe_call
from grader.checks.evidence import evidence, host_text, host_work
from grader.checks.primitive_params import matches, observed_text, wanted_text
from grader.observe.program import Node, Program, primitives_for
from grader.outcome import Category, Outcome

# The collectives a task names, each with the primitive names that mean it (grader.observe.program.MEANING);
# a pmean is a psum divided (``mean_of`` tells them apart).
ALIASES: dict[str, tuple[str, ...]] = {
    operation: primitives_for("psum" if operation == "pmean" else operation)
    for operation in ("psum", "pmean", "all_gather", "psum_scatter", "pmax", "pmin", "ppermute", "all_to_all")}
# How a student writes each one, for messages.
SPELLING = {"psum": "jax.lax.psum", "pmean": "jax.lax.pmean", "all_gather": "jax.lax.all_gather",
            "psum_scatter": "jax.lax.psum_scatter", "pmax": "jax.lax.pmax", "pmin": "jax.lax.pmin",
            "ppermute": "jax.lax.ppermute", "all_to_all": "jax.lax.all_to_all", "shard_map": "jax.shard_map",
            "jit": "jax.jit", "dot_general": "matrix product (dot_general: x @ w, jnp.dot, jnp.einsum)",
            "scan": "jax.lax.scan", "while": "jax.lax.while_loop (or jax.lax.fori_loop with traced bounds)"}


# Operations that only place, copy or retype a value: allowed beside the transformation that
# ``UsesPrimitive.only_inside`` asks the work to be in (``jnp.asarray(x)``, ``device_put``).
MOVES = frozenset({"device_put", "copy", "copy_p", "convert_element_type"})


def census(program: Program, shown: int = 5) -> str:
    """What the program performs, counted by primitive, the most frequent first: "47 operations:
    16 mul, 16 add, 15 dynamic_slice" (what a check that looks for or counts operations judged)."""
    counts: dict[str, int] = {}
    for node in program.nodes:
        counts[node.primitive] = counts.get(node.primitive, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    listed = ", ".join(f"{n} {name}" for name, n in ranked[:shown])
    more = f" and {len(ranked) - shown} more kinds" if len(ranked) > shown else ""
    total = len(program.nodes)
    return f"{total} operation{'s' * (total != 1)}" + (f": {listed}{more}" if ranked else "")


def names_of(operation: str) -> tuple[str, ...]:
    return ALIASES.get(operation, (operation,))


WRITTEN_COLLECTIVES = frozenset(name for names in ALIASES.values() for name in names)


def operation_of(primitive: str) -> str:
    """The collective as written that ``primitive`` binds (psum's primitives as "psum")."""
    return next((operation for operation, names in ALIASES.items() if primitive in names), primitive)


def in_while(node: Node) -> bool:
    """Whether ``node`` sits in a ``while_loop`` (its body or its condition, however deep: in a
    scan, a jit or a shard_map inside it, or with them around it)."""
    return "while" in node.within


def collectives_in_while(program: Program) -> list[Node]:
    """The collectives the program writes inside a ``while_loop``."""
    return [n for n in program.nodes if n.primitive in WRITTEN_COLLECTIVES and not n.inlined and in_while(n)]


def spelled(operation: str) -> str:
    return SPELLING.get(operation, operation)


def _axis_size(node: Node, sizes: dict[str, int]) -> int | None:
    """The number of devices along the axes a collective runs over (None when unknown)."""
    axes = _axes(node)
    return prod(sizes[a] for a in axes) if axes and all(a in sizes for a in axes) else None


def _axes(node: Node) -> list[Any]:
    axes = node.params.get("axes", node.params.get("axis_name", ()))
    return list(axes) if isinstance(axes, (list, tuple)) else [axes]


def axis_sizes(program: Program) -> dict[str, int]:
    """The size of every mesh axis a shard_map of the program runs over."""
    sizes: dict[str, int] = {}
    for node in program.uses("shard_map"):
        mesh = node.params.get("mesh") or {}
        sizes.update(zip(mesh.get("axis_names") or (), mesh.get("mesh_shape") or ()))
    return sizes


def mean_of(program: Program, node: Node, sizes: dict[str, int]) -> Node | None:
    """What makes ``node`` (a psum) a mean: a consumer dividing its output by the size of its
    axes (or multiplying it by the inverse), or the same done to what it sums (``psum(g / n)``);
    None when the psum stays a sum."""
    axes = _axes(node)
    if not all(a in sizes for a in axes):
        return None
    count = prod(sizes[a] for a in axes)
    for read in node.inputs:
        source = _producer(program, read)
        if source is not None and any(_scales_by_inverse(program, source, value, count) for value in source.inputs):
            return node
    for out in node.outputs:
        for consumer in program.consumers(out) if out is not None else ():
            if _scales_by_inverse(program, consumer, out, count):
                return consumer
    return None


def _producer(program: Program, value: int | None) -> Node | None:
    return next((n for n in program.nodes if value is not None and value in n.outputs and not n.inlined), None)


def _constant(program: Program, node: Node, position: int) -> Any:
    """The number ``node`` reads at ``position``: a literal, or one that only went through a
    cast or shard_map's ``pvary`` (how check_vma brings a constant into the per-device body)."""
    literals = node.literals or {}
    if position in literals:
        return literals[position]
    source = _producer(program, node.inputs[position]) if position < len(node.inputs) else None
    if source is not None and source.primitive in ("pvary", "convert_element_type", "broadcast_in_dim"):
        return (source.literals or {}).get(0)
    return None


def _scales_by_inverse(program: Program, node: Node, value: int | None, count: int) -> bool:
    """Whether ``node`` divides ``value`` by ``count``, or multiplies it by 1/count."""
    if node.primitive == "div":
        return node.inputs[:1] == (value,) and _near(_constant(program, node, 1), count)
    if node.primitive != "mul" or value not in node.inputs:
        return False
    return any(_near(_constant(program, node, i), 1 / count) for i in range(len(node.inputs)))


def _near(value: Any, wanted: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value - wanted) <= 1e-6 * abs(wanted)


def unknown_reads(check: str, reads: str | None, signature: Signature) -> list[str]:
    """The authoring problem of a ``reads=`` that names no parameter or leaf of one."""
    if reads is None or any(is_within(p, reads) for p in signature.leaf_specs()):
        return []
    return [f"{check}: reads={reads!r} names no parameter or leaf of one"]


def observed_program(context: Context) -> tuple[Program | None, str | None]:
    """The program the probe call ran, or why there is none to judge."""
    returned = probe_call(context)
    if not returned.ok or returned.program is None:
        return None, f"your function {returned.describe()}"
    problem = evidence(context).problem
    if problem:
        return None, problem[:1].lower() + problem[1:]
    unstaged = [n for n in returned.program.uses("shard_map") if "unstaged" in n.params]
    if unstaged:
        return None, ("the body of your jax.shard_map could not be traced "
                      f"({str(unstaged[0].params['unstaged'])[:200]}), so the operations inside it cannot be seen")
    return returned.program, None


@dataclass(frozen=True, kw_only=True)
class UsesPrimitive(Check):
    """``operation`` (a primitive, or a collective named as in ``ALIASES``; ``"psum"`` and
    ``"pmean"`` by meaning) appears in the program: over exactly ``axes`` when given
    (collectives), inside ``inside`` when given (e.g. ``"shard_map"``), and, with ``on_path``,
    reading a value computed from ``reads`` (a parameter or leaf; any argument when None) and
    feeding the result (so a collective on a constant, or one whose output is dropped, does
    not count), with ``params`` when given (``{"perm": CyclicShift(1)}``,
    ``{"scatter_dimension": 0, "tiled": True}``, ``{"length": 8}``:
    ``grader.checks.primitive_params``). With ``reads``, work on the host (``grader.checks.evidence.host_work``) is
    refused unless ``allow_host``: ``pmean(g) * 0`` plus a mean taken in NumPy has the link
    and none of the work."""
    operation: str
    axes: tuple[str, ...] | None = None
    inside: str | None = None
    on_path: bool = True
    reads: str | None = None
    allow_host: bool = False
    params: Mapping[str, Any] | None = None
    # With ``inside``: every operation on the way from ``reads`` to the result is inside it, not
    # only ``operation`` (a loss computed eagerly beside a jitted update, with or without a matmul)
    only_inside: bool = False
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        found = unknown_reads(self.id, self.reads, signature)
        if self.only_inside and not self.inside:
            found.append(f"{self.id}: only_inside needs inside= (the transformation every operation must be in)")
        return found

    def expected_text(self) -> str:
        text = spelled(self.operation)
        if self.axes is not None:
            text += f" over axis {', '.join(map(repr, self.axes))}"
        if self.inside:
            text += f" inside {spelled(self.inside)}"
        if self.params:
            text += f" with {', '.join(wanted_text(n, w) for n, w in self.params.items())}"
        source = self.reads or "the arguments"
        return text + (f" on the way from {source} to the result" if self.on_path else "")

    def judge(self, context: Context) -> Outcome:
        program, why = observed_program(context)
        want = self.expected_text()
        if program is None:
            return Outcome.failed(f"The program could not be inspected: {why}.", expected=want, observed=str(why))
        sizes = axis_sizes(program)
        found = [n for n in program.nodes if n.primitive in names_of(self.operation)]
        means: list[Node] = []
        if self.operation in ("psum", "pmean"):
            means = [n for n in found if mean_of(program, n, sizes)]
            found = means if self.operation == "pmean" else [n for n in found if n not in means]
        if not found:
            if self.operation == "psum" and means:
                axes = _axes(means[0])
                return Outcome.failed(
                    f"Your program averages with a mean (a psum divided by the size of axis {axes}, which is what "
                    f"jax.lax.pmean does); the task asks for {want}, whose result is the sum over the devices. "
                    "Scaling a mean back up is not the same operation.",
                    expected=want, observed=f"jax.lax.pmean over {axes}")
            return Outcome.failed(f"Your program never uses {spelled(self.operation)}. The task asks for {want}.",
                                  expected=want, observed=f"no {spelled(self.operation)} among the program's "
                                                          f"{census(program)}")
        if self.axes is not None:
            axes_seen = [_axes(n) for n in found]
            found = [n for n in found if set(_axes(n)) == set(self.axes)]
            if not found:
                seen = "; ".join(repr(tuple(a)) for a in axes_seen)
                return Outcome.failed(f"Your {spelled(self.operation)} runs over axes {seen}; the task asks for "
                                      f"{self.axes!r}.", expected=want, observed=f"axes {seen}")
        if self.inside:
            outside = found
            found = [n for n in found if self.inside in n.within]
            if not found:
                where = sorted({" in ".join(n.within) or "at the top level" for n in outside})
                return Outcome.failed(f"Your {spelled(self.operation)} is not inside {spelled(self.inside)} "
                                      f"(found {len(outside)} outside it).", expected=want,
                                      observed=f"{len(outside)} {spelled(self.operation)} outside "
                                               f"{spelled(self.inside)} ({'; '.join(where)})")
            stray = self._on_path(program, self._beside(program), sizes) if self.only_inside else []
            if stray:
                source = self.reads or "your arguments"
                kinds = sorted({n.primitive for n in stray})
                seen = (f"{len(stray)} operation{'s' * (len(stray) != 1)} outside {spelled(self.inside)} "
                        f"({', '.join(kinds[:6])}{', ...' * (len(kinds) > 6)}) on the way from {source} to what "
                        "your function returns")
                return Outcome.failed(f"Your program also computes part of the task outside "
                                      f"{spelled(self.inside)}: {seen}. Work beside {spelled(self.inside)} runs "
                                      "operation by operation on every call; the task asks for all of it inside.",
                                      expected=f"every operation on the way from {source} to the result inside "
                                               f"{spelled(self.inside)}", observed=seen)
        if self.params:
            seen = found
            found = [n for n in found if all(matches(w, n.params.get(k), _axis_size(n, sizes))
                                             for k, w in self.params.items())]
            if not found:
                node = seen[0]
                differ = [(k, w) for k, w in self.params.items() if not matches(w, node.params.get(k),
                                                                                 _axis_size(node, sizes))]
                observed = ", ".join(observed_text(k, w, node.params.get(k), _axis_size(node, sizes))
                                     for k, w in differ)
                return Outcome.failed(f"Your {spelled(self.operation)} has {observed}; the task asks for {want}.",
                                      expected=want, observed=f"{spelled(self.operation)} with {observed}")
        if self.on_path:
            sources = [i for p, i in zip(program.input_paths, program.inputs)
                       if self.reads is None or is_within(p, self.reads)]
            reached = program.derived_from(sources)
            reads = [n for n in found if reached.intersection(i for i in n.inputs if i is not None)]
            source = self.reads or "your arguments"
            if not reads:
                return Outcome.failed(f"Your {spelled(self.operation)} never reads a value computed from {source}, "
                                      "so it does no part of the task's work.", expected=want,
                                      observed=f"{spelled(self.operation)} on values unrelated to {source}")
            feeding = [n for n in reads if any(program.feeds(o) for o in self._outputs(program, n, sizes))]
            if not feeding:
                return Outcome.failed(f"The result of your {spelled(self.operation)} is never used: the value you "
                                      "return is computed without it.", expected=want,
                                      observed=f"{spelled(self.operation)} whose output is dropped")
        work = host_work(context) if self.reads is not None and not self.allow_host else None
        if work is not None:
            return Outcome.failed(host_text(work, f"the result, through {want},") + ".", expected=want,
                                  observed=work.call)
        return Outcome.passed(f"Your program uses {want}.")

    def _beside(self, program: Program) -> list[Node]:
        """The operations outside ``inside`` that compute something: not ``inside``'s own call,
        not a call whose body is walked in its place, not a value only moved or retyped."""
        return [n for n in program.nodes if self.inside not in n.within and not n.inlined and ":" not in n.primitive
                and n.primitive not in names_of(self.inside) and n.primitive not in MOVES]

    def _on_path(self, program: Program, nodes: list[Node], sizes: dict[str, int]) -> list[Node]:
        """Those of ``nodes`` that read a value computed from ``reads`` and feed the result."""
        sources = [i for p, i in zip(program.input_paths, program.inputs)
                   if self.reads is None or is_within(p, self.reads)]
        reached = program.derived_from(sources)
        return [n for n in nodes if reached.intersection(i for i in n.inputs if i is not None)
                and any(program.feeds(o) for o in self._outputs(program, n, sizes))]

    def _outputs(self, program: Program, node: Node, sizes: dict[str, int]) -> list[int]:
        """What a found operation gives: for a mean, what the division gives."""
        divided = mean_of(program, node, sizes) if self.operation == "pmean" else None
        return [o for o in (divided or node).outputs if o is not None]


@dataclass(frozen=True, kw_only=True)
class AvoidsPrimitives(Check):
    """None of ``operations`` appears in the program (for tasks that must not, say, gather the
    whole array onto every device). ``why`` says what each would mean. With ``host``, no call
    does work on the host either (``grader.checks.evidence.host_work``: a callback whose
    result is used, a value pulled to NumPy and given back to JAX).
    With ``reads`` (a parameter or leaf, ``"q"``, ``"params['w']"``), only an operation that
    reads a value computed from it counts: "no all_gather of the tokens" while the weights may
    be gathered. Dataflow follows each operand of a tuple ``device_put`` or collective apart
    (``grader.observe.program.PER_OPERAND``), so gathering k after placing (q, k, v) together
    does not read q."""
    operations: tuple[str, ...]
    why: str = ""
    host: bool = False
    reads: str | None = None
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        return unknown_reads(self.id, self.reads, signature)

    def judge(self, context: Context) -> Outcome:
        program, reason = observed_program(context)
        listed = ", ".join(spelled(o) for o in self.operations) + (" or host work" if self.host else "")
        if self.reads is not None:
            listed += f" reading a value computed from {self.reads}"
        if program is None:
            return Outcome.failed(f"The program could not be inspected: {reason}.",
                                  expected=f"no {listed}", observed=str(reason))
        work = host_work(context) if self.host else None
        if work is not None:
            return Outcome.failed(host_text(work, "all of it") + ".", expected=f"no {listed}",
                                  observed=f"{work.kind.replace('_', ' ')}: {work.call}")
        nodes = list(program.nodes)
        if self.reads is not None:
            reached = program.derived_from(i for p, i in zip(program.input_paths, program.inputs)
                                           if is_within(p, self.reads))
            nodes = [n for n in nodes if reached.intersection(n.inputs)]
        used = [o for o in self.operations if any(n.primitive in names_of(o) for n in nodes)]
        if used:
            text = ", ".join(spelled(o) for o in used)
            counted = ", ".join(f"{sum(n.primitive in names_of(o) for n in nodes)} {spelled(o)}" for o in used)
            on = f" on a value computed from {self.reads}" if self.reads is not None else ""
            return Outcome.failed(f"Your program uses {text}{on}. {self.why}".strip(), expected=f"no {listed}",
                                  observed=f"{counted}{on} among the program's {census(program)}")
        return Outcome.passed(f"Your program uses none of {listed}.")
