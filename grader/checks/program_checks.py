"""``structure``: which operations the traced program performs, or must not perform.

A sharded computation is only what the task asks when the program really does it: a sum
over a sharded array that matches ``jnp.sum(x)`` can come from a ``psum`` across devices or
from gathering everything to one place first. These checks read the program JAX traces
for the function (``jax.make_jaxpr`` in the child) and declare, per exercise, which
primitives must appear (over which mesh axes, inside which transformation, on the path from
x to the result) and which must not.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from grader.checks.base import Check, Context
from grader.checks.returns import probe_call
from grader.outcome import Category, Outcome
from grader.observe.program import Node, Program

# JAX binds some collectives under several primitive names depending on the version and on
# shard_map's check_vma; a task names the operation, the program shows one of these.
ALIASES: dict[str, tuple[str, ...]] = {
    "psum": ("psum", "psum_invariant", "psum2"),
    "all_gather": ("all_gather", "all_gather_invariant"),
    "psum_scatter": ("reduce_scatter", "psum_scatter"),
    "pmax": ("pmax",),
    "pmin": ("pmin",),
    "ppermute": ("ppermute",),
    "all_to_all": ("all_to_all",),
}
# How a student writes each one, for messages.
SPELLING = {"psum": "jax.lax.psum", "all_gather": "jax.lax.all_gather", "psum_scatter": "jax.lax.psum_scatter",
            "pmax": "jax.lax.pmax", "pmin": "jax.lax.pmin", "ppermute": "jax.lax.ppermute",
            "all_to_all": "jax.lax.all_to_all", "shard_map": "jax.shard_map", "jit": "jax.jit"}


def names_of(operation: str) -> tuple[str, ...]:
    return ALIASES.get(operation, (operation,))


def spelled(operation: str) -> str:
    return SPELLING.get(operation, operation)


def traced_program(context: Context) -> tuple[Program | None, str | None]:
    """The submission's program on the probe input (traced once per submission), or why not."""
    def trace() -> tuple[Program | None, str | None]:
        returned = probe_call(context)
        if not returned.ok:
            return None, f"your function {returned.describe()}"
        reply = context.memo("trace", lambda: context.session.trace(context.probe))  # shared with placements
        if not reply.get("ok"):
            return None, f"jax.make_jaxpr could not trace your function: {reply.get('error')}"
        return Program.from_data(reply["program"]), None
    return context.memo("program", trace)


@dataclass(frozen=True, kw_only=True)
class UsesPrimitive(Check):
    """``operation`` (a primitive, or a collective named as in ``ALIASES``) appears in the
    traced program: over exactly ``axes`` when given (collectives), inside ``inside`` when
    given (e.g. ``"shard_map"``), and, with ``on_path``, reading a value computed from x and
    feeding the result (so a collective on a constant, or one whose output is dropped, does
    not count)."""
    operation: str
    axes: tuple[str, ...] | None = None
    inside: str | None = None
    on_path: bool = True
    category: ClassVar[Category] = "structure"

    def expected_text(self) -> str:
        text = spelled(self.operation)
        if self.axes is not None:
            text += f" over axis {', '.join(map(repr, self.axes))}"
        if self.inside:
            text += f" inside {spelled(self.inside)}"
        return text + (" on the way from x to the result" if self.on_path else "")

    def judge(self, context: Context) -> Outcome:
        program, why = traced_program(context)
        want = self.expected_text()
        if program is None:
            return Outcome.failed(f"The program could not be inspected: {why}. This check needs a function "
                                  "jax.make_jaxpr can trace.", expected=want, observed=str(why))
        found = [n for n in program.nodes if n.primitive in names_of(self.operation)]
        if not found:
            return Outcome.failed(f"Your program never uses {spelled(self.operation)}. The task asks for {want}.",
                                  expected=want, observed=f"no {spelled(self.operation)} in the traced program")
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
                return Outcome.failed(f"Your {spelled(self.operation)} is not inside {spelled(self.inside)} "
                                      f"(found {len(outside)} outside it).", expected=want,
                                      observed=f"{spelled(self.operation)} outside {spelled(self.inside)}")
        if self.on_path:
            from_x = program.derived_from(program.inputs[:1])
            reads_x = [n for n in found if from_x.intersection(i for i in n.inputs if i is not None)]
            if not reads_x:
                return Outcome.failed(f"Your {spelled(self.operation)} never reads a value computed from x, so it "
                                      "does no part of the task's work.", expected=want,
                                      observed=f"{spelled(self.operation)} on values unrelated to x")
            results = {o for o in program.outputs if o is not None}
            feeding = [n for n in reads_x if results.intersection(program.derived_from(
                [o for o in n.outputs if o is not None]))]
            if not feeding:
                return Outcome.failed(f"The result of your {spelled(self.operation)} is never used: the value you "
                                      "return is computed without it.", expected=want,
                                      observed=f"{spelled(self.operation)} whose output is dropped")
        return Outcome.passed(f"Your program uses {want}.")


@dataclass(frozen=True, kw_only=True)
class AvoidsPrimitives(Check):
    """None of ``operations`` appears in the traced program (for tasks that must not, say,
    gather the whole array onto every device). ``why`` says what each would mean."""
    operations: tuple[str, ...]
    why: str = ""
    category: ClassVar[Category] = "structure"

    def judge(self, context: Context) -> Outcome:
        program, reason = traced_program(context)
        listed = ", ".join(spelled(o) for o in self.operations)
        if program is None:
            return Outcome.failed(f"The program could not be inspected: {reason}.",
                                  expected=f"no {listed}", observed=str(reason))
        used = [o for o in self.operations if any(n.primitive in names_of(o) for n in program.nodes)]
        if used:
            text = ", ".join(spelled(o) for o in used)
            return Outcome.failed(f"Your program uses {text}. {self.why}".strip(), expected=f"no {listed}",
                                  observed=f"{text} in the traced program")
        return Outcome.passed(f"Your program uses none of {listed}.")


def _axes(node: Node) -> list[Any]:
    axes = node.params.get("axes", node.params.get("axis_name", ()))
    return list(axes) if isinstance(axes, (list, tuple)) else [axes]
