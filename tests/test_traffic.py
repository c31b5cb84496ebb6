"""``CollectiveCount``, ``PlacedAtMostPerDevice`` and budgets relative to a result or in bytes of
arguments (``grader.checks.traffic``, ``grader.checks.compiled_program``), judged by real
gradings of a copy of shard_map_psum with the checks added.

The reference (one psum in a jitted shard_map over blocks) passes every one; a psum applied
twice, a gather of x, blocks that are all of x, and the same shard_map run eagerly each fail
the checks that tell them apart, and only those."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import exercise_with_checks

from grader.engine import grade

SLUG = "shard_map_psum"
REPO = Path(__file__).resolve().parent.parent
ADDED = '''

from grader.authoring import CollectiveCount, CommunicatesAtMost, DeviceMemoryAtMost, PlacedAtMostPerDevice

CHECKS[-1:-1] = [
    CollectiveCount(id="structure.one_psum", title="Exactly one psum over 'data'", operation="psum", exactly=1,
                    axes=("data",)),
    CollectiveCount(id="structure.one_all_reduce", title="XLA runs one all-reduce in your jitted function",
                    operation="all-reduce", exactly=1, own_only=True),
    CollectiveCount(id="structure.any_all_reduce", title="XLA runs at least one all-reduce",
                    operation="all-reduce", at_least=1),
    CommunicatesAtMost(id="structure.moves_result", title="At most one result's bytes moved per device",
                       of="result", fraction=1.0),
    PlacedAtMostPerDevice(id="structure.x_split", title="Each device is handed at most 1/8 of x",
                          operand="x", fraction=1 / 8, via=("shard_map_in",)),
    DeviceMemoryAtMost(id="structure.arguments_split", title="The jitted program takes at most 1/8 of x per device",
                       kind="argument", of="x", fraction=1 / 8, own_only=True),
]
'''
POINTS = ('"structure.one_psum" = 1\n"structure.one_all_reduce" = 1\n"structure.any_all_reduce" = 1\n'
          '"structure.moves_result" = 1\n"structure.x_split" = 1\n"structure.arguments_split" = 1\n')
HEADER = '''import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
'''
SUBMISSIONS = {
    # the total psum'd, then psum'd again from the first device only: right, two all-reduces in a row
    "two_psums": HEADER + '''

def _block_sum(block):
    total = jax.lax.psum(jnp.sum(block), "data")
    return jax.lax.psum(jnp.where(jax.lax.axis_index("data") == 0, total, 0.0), "data")


SUM = jax.jit(jax.shard_map(_block_sum, mesh=MESH, in_specs=P("data"), out_specs=P()))


def sharded_sum(x):
    return SUM(x)
''',
    # every device gathers all of x and sums it: no psum, an all-gather of x
    "gathers": HEADER + '''

def _block_sum(block):
    return jnp.sum(jax.lax.all_gather(block, "data", tiled=True))


SUM = jax.jit(jax.shard_map(_block_sum, mesh=MESH, in_specs=P("data"), out_specs=P(), check_vma=False))


def sharded_sum(x):
    return SUM(x)
''',
    # every device is handed all of x (in_specs P()), sums an eighth of the total and psums
    "replicated_blocks": HEADER + '''

def _block_sum(block):
    return jax.lax.psum(jnp.sum(block) / 8, "data")


SUM = jax.jit(jax.shard_map(_block_sum, mesh=MESH, in_specs=P(), out_specs=P()))


def sharded_sum(x):
    return SUM(x)
''',
    # the reference's shard_map, run eagerly: the all-reduce is in JAX's program, not the student's
    "eager": HEADER + '''

def _block_sum(block):
    return jax.lax.psum(jnp.sum(block), "data")


def sharded_sum(x):
    return jax.shard_map(_block_sum, mesh=MESH, in_specs=P("data"), out_specs=P())(x)
''',
}
IDS = ("structure.one_psum", "structure.one_all_reduce", "structure.any_all_reduce", "structure.moves_result",
       "structure.x_split", "structure.arguments_split")


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    exercise = exercise_with_checks(SLUG, ADDED, POINTS, tmp_path_factory.mktemp("exercises"))
    folder = tmp_path_factory.mktemp("submissions")
    paths = {"reference": REPO / "exercises" / SLUG / "reference.py"}
    for name, text in SUBMISSIONS.items():
        paths[name] = folder / f"{name}.py"
        paths[name].write_text(text)
    return {name: {c.id: c for c in grade(exercise, path).checks} for name, path in paths.items()}


def _failed(report, *expected: str) -> None:
    """Exactly the checks ``expected`` (of those added) fail."""
    failed = {i for i in IDS if report[i].status != "passed"}
    assert failed == set(expected), {i: report[i].message for i in IDS}


@pytest.mark.slow
def test_the_reference_passes_every_count_and_budget(reports) -> None:
    _failed(reports["reference"])
    one = reports["reference"]["structure.one_psum"]
    assert one.message == "Your program performs 1 jax.lax.psum (over ('data',)) (exactly 1 jax.lax.psum over " \
                          "axis 'data').", one.message
    moved = reports["reference"]["structure.moves_result"]
    assert "(at most 4 bytes (all of the 4 bytes of result))" in moved.message, moved.message


@pytest.mark.slow
def test_two_psums_are_counted_where_written_and_where_xla_runs_them(reports) -> None:
    _failed(reports["two_psums"], "structure.one_psum", "structure.one_all_reduce", "structure.moves_result")
    one = reports["two_psums"]["structure.one_psum"]
    assert one.observed == "2 jax.lax.psum (over ('data',))" and one.expected == "exactly 1 jax.lax.psum over axis 'data'"
    xla = reports["two_psums"]["structure.one_all_reduce"]
    assert xla.observed.startswith("2 all-reduce (2 in "), xla.observed


@pytest.mark.slow
def test_a_gather_moves_more_than_the_result(reports) -> None:
    _failed(reports["gathers"], "structure.one_psum", "structure.one_all_reduce", "structure.any_all_reduce",
            "structure.moves_result")
    moved = reports["gathers"]["structure.moves_result"]
    assert "an all-gather of 64 bytes" in moved.observed and "all of the 4 bytes of result" in moved.message


@pytest.mark.slow
def test_blocks_that_are_all_of_x_are_placed_and_taken_whole(reports) -> None:
    _failed(reports["replicated_blocks"], "structure.x_split", "structure.arguments_split")
    split = reports["replicated_blocks"]["structure.x_split"]
    assert split.observed.startswith("64 bytes of the 64 bytes of x on one device (all of it)"), split.observed


@pytest.mark.slow
def test_own_only_leaves_out_the_programs_jax_runs_for_eager_work(reports) -> None:
    _failed(reports["eager"], "structure.one_all_reduce", "structure.arguments_split")
    assert reports["eager"]["structure.one_all_reduce"].observed == "0 all-reduce"


def test_declarations_that_cannot_work_are_reported() -> None:
    import numpy as np

    from grader.arguments import Array, Signature
    from grader.checks import CollectiveCount, CommunicatesAtMost, PlacedAtMostPerDevice
    signature = Signature({"x": Array("float32", "n")}, returns=Array("float32", ()))
    probe = {"x": np.zeros(16, np.float32)}
    assert CollectiveCount(id="s.c", title="t", operation="psum", exactly=1).problems(signature, probe) == []
    assert CollectiveCount(id="s.c", title="t", operation="all-gather", at_most=0).problems(signature, probe) == []
    assert CollectiveCount(id="s.c", title="t", operation="allreduce", exactly=1).problems(
        signature, probe)[0].startswith("s.c: unknown collective 'allreduce'")
    assert CollectiveCount(id="s.c", title="t", operation="psum").problems(signature, probe) == [
        "s.c: give exactly, at_least or at_most"]
    assert "axes= names mesh axes" in " ".join(CollectiveCount(
        id="s.c", title="t", operation="all-reduce", exactly=1, axes=("data",)).problems(signature, probe))
    assert CommunicatesAtMost(id="s.m", title="t", of="result", fraction=1.0).problems(signature, probe) == []
    assert CommunicatesAtMost(id="s.m", title="t", of="result[0]", fraction=1.0).problems(signature, probe) == [
        "s.m: of='result[0]' is no leaf of the declared return (result)"]
    assert PlacedAtMostPerDevice(id="s.p", title="t", operand="w", fraction=0.5).problems(
        signature, probe)[0].startswith("s.p: operand='w' is no array leaf of the probe")
