"""``SameJit``: operations that must run in the same call of one of the submission's own jitted
functions, judged by real gradings of a copy of sharding_constraint with the check added.

The constraint and the row sums in one jitted function pass (a jitted helper called inside
it is part of the caller's program); eagerly, or in two jitted functions of their own, they
fail; with ``linked``, a sum that does not read the constrained value fails too. ``jit_scopes``,
which says which call each node sits in, is checked on a program built by hand."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import exercise_with_checks

from grader.checks.scope import jit_scopes
from grader.engine import grade
from grader.observe.program import Node, Program

SLUG = "sharding_constraint"
REPO = Path(__file__).resolve().parent.parent
ADDED = '''

from grader.authoring import SameJit

CHECKS[-1:-1] = [
    SameJit(id="structure.same_jit", title="The constraint and the row sums are one jitted program",
            operations=(("sharding_constraint", "device_put", "all_gather"), "reduce_sum"), linked=True,
            hint="Constrain and sum inside the same jax.jit function."),
    SameJit(id="structure.same_jit_unlinked", title="A constraint and a sum in one jitted program",
            operations=("sharding_constraint", "reduce_sum")),
]
'''
POINTS = '"structure.same_jit" = 2\n"structure.same_jit_unlinked" = 1\n'
HEADER = '''import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
ROWS = NamedSharding(MESH, PartitionSpec("data", None))
'''
SUBMISSIONS = {
    # a jitted helper that constrains, called inside the jitted function that sums
    "nested_jit": HEADER + '''

@jax.jit
def _constrain(y):
    return jax.lax.with_sharding_constraint(y, ROWS)


@jax.jit
def _energies(m):
    return jnp.sum(_constrain(m * m), axis=1)


def row_energies(x):
    return _energies(x)
''',
    # the squares gathered by a shard_map's all_gather inside the jitted function that sums: another route
    "shard_map_gather": HEADER + '''

def _gather(block):
    return jax.lax.all_gather(block * block, "data", tiled=True)


@jax.jit
def _energies(m):
    gathered = jax.shard_map(_gather, mesh=MESH, in_specs=PartitionSpec("data", None), out_specs=PartitionSpec(),
                             check_vma=False)(m)
    return jnp.sum(gathered, axis=1)


def row_energies(x):
    return _energies(x)
''',
    # the constraint in a jitted function of its own, the sum in another
    "two_jits": HEADER + '''

@jax.jit
def _constrain(y):
    return jax.lax.with_sharding_constraint(y * y, ROWS)


@jax.jit
def _sum(y):
    return jnp.sum(y, axis=1)


def row_energies(x):
    return _sum(_constrain(x))
''',
    # both in one jitted function, but the sum reads the unconstrained squares
    "unlinked": HEADER + '''

@jax.jit
def _energies(m):
    constrained = jax.lax.with_sharding_constraint(m * m, ROWS)
    return jnp.sum(m * m, axis=1) + 0 * constrained[:, 0]


def row_energies(x):
    return _energies(x)
''',
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    exercise = exercise_with_checks(SLUG, ADDED, POINTS, tmp_path_factory.mktemp("exercises"))
    folder = tmp_path_factory.mktemp("submissions")
    paths = {"reference": REPO / "exercises" / SLUG / "reference.py",
             "eager": REPO / "exercises" / SLUG / "wrong" / "structure_outside_jit.py"}
    for name, text in SUBMISSIONS.items():
        paths[name] = folder / f"{name}.py"
        paths[name].write_text(text)
    return {name: {c.id: c for c in grade(exercise, path).checks} for name, path in paths.items()}


@pytest.mark.slow
def test_one_jitted_function_passes_and_a_jitted_helper_inside_it_is_part_of_it(reports) -> None:
    for name in ("reference", "nested_jit", "shard_map_gather"):
        same = reports[name]["structure.same_jit"]
        assert same.status == "passed" and same.score == 2, (name, same.message)
        assert same.message.startswith("Your program runs jax.lax.with_sharding_constraint or jax.device_put or "
                                       "jax.lax.all_gather and reduce_sum in the same jitted function"), same.message
    for name in ("reference", "nested_jit"):
        assert reports[name]["structure.same_jit_unlinked"].status == "passed"
    # no constraint at all: the gather is a shard_map's all_gather
    assert reports["shard_map_gather"]["structure.same_jit_unlinked"].status == "failed"


@pytest.mark.slow
def test_eager_operations_are_in_no_jitted_function(reports) -> None:
    same = reports["eager"]["structure.same_jit"]
    assert same.status == "failed" and same.score == 0, same.message
    assert "outside every jitted function of yours" in same.message, same.message
    assert same.hint == "Constrain and sum inside the same jax.jit function."
    assert "eager" in same.observed


@pytest.mark.slow
def test_two_jitted_functions_are_two_programs(reports) -> None:
    for check_id in ("structure.same_jit", "structure.same_jit_unlinked"):
        same = reports["two_jits"][check_id]
        assert same.status == "failed", same.message
        assert same.message.startswith("Your program runs these operations in different jitted functions"), \
            same.message
        assert "jitted call 1 (_constrain)" in same.observed and "jitted call 2 (_sum)" in same.observed, \
            same.observed


@pytest.mark.slow
def test_linked_needs_the_sum_to_read_the_constrained_value(reports) -> None:
    assert reports["unlinked"]["structure.same_jit_unlinked"].status == "passed"
    same = reports["unlinked"]["structure.same_jit"]
    assert same.status == "failed", same.message
    assert "one does not read what the one before it gives" in same.message, same.message


def test_jit_scopes_name_the_outermost_call_a_node_sits_in() -> None:
    def node(primitive, within=(), inlined=False):
        return Node(primitive, (), (), {}, tuple(within), inlined)
    # eager mul; jit A holding (sin, jit B holding cos); jit C holding a scan with exp in its body
    program = Program((), (), (
        node("mul"),
        node("sin", ["jit"]), node("cos", ["jit", "jit"]), node("jit", ["jit"], True), node("jit", [], True),
        node("scan:enter", ["jit"]), node("exp", ["jit", "scan"]), node("scan:exit", ["jit"]), node("scan", ["jit"]),
        node("jit", [], True),
        node("add"),
    ), {})
    assert jit_scopes(program) == {1: 4, 2: 4, 3: 4, 5: 9, 6: 9, 7: 9, 8: 9}
