"""Program checks (``UsesPrimitive``, ``AvoidsPrimitives``) and result-layout checks
(``ResultSharding``, ``ShardLayout``) judged on real submissions run in a real child.

Each case is a small submission written to a temporary file, loaded in a sandboxed child with
8 simulated devices; the check reads the real probe call and the real traced program, exactly
as during grading (without the value checks, which cost most of a grading).
"""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from grader.checks import (AvoidsPrimitives, Context, NamedShardingTarget, ResultSharding, ShardLayout,
                           UsesPrimitive)
from grader.checks.base import Check
from grader.outcome import Outcome
from grader.sandbox.process import Limits
from grader.observe.session import Session

HEADER = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
GRID = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
"""
PROBE = np.arange(16, dtype=np.float32) - 5.0
PSUM = UsesPrimitive(id="structure.psum", title="psum over data", operation="psum", axes=("data",),
                     inside="shard_map")


@pytest.fixture
def judge(tmp_path: Path) -> Iterator:
    sessions: list[Session] = []

    def run(check: Check, body: str, probe: np.ndarray = PROBE) -> Outcome:
        path = tmp_path / f"case{len(sessions)}.py"
        path.write_text(HEADER + "\n\n" + textwrap.dedent(body))
        session = Session(path, "f", 8, Limits(call_s=20, total_s=60))
        sessions.append(session)
        assert session.load().ok, session.load().detail
        return check.judge(Context(session, probe, 0, "f", path.stem, 8))

    yield run
    for session in sessions:
        session.close()


def test_a_psum_inside_shard_map_on_the_way_to_the_result_passes(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            return jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), "data"), mesh=MESH,
                                 in_specs=P("data"), out_specs=P())(x)
    """)
    assert outcome.status == "passed", outcome.message


def test_psum_without_the_vma_check_binds_another_primitive_and_still_counts(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            return jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), "data"), mesh=MESH,
                                 in_specs=P("data"), out_specs=P(), check_vma=False)(x)
    """)
    assert outcome.status == "passed", outcome.message


def test_summing_locally_without_the_collective_fails(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            partial = jax.shard_map(lambda b: jnp.sum(b, keepdims=True), mesh=MESH,
                                    in_specs=P("data"), out_specs=P("data"))(x)
            return jnp.sum(partial)
    """)
    assert outcome.status == "failed" and "never uses jax.lax.psum" in outcome.message


def test_a_psum_over_another_axis_fails(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            return jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), "model"), mesh=GRID,
                                 in_specs=P("model"), out_specs=P())(x[:4])
    """)
    assert outcome.status == "failed" and "runs over axes ('model',)" in outcome.message


def test_a_psum_of_something_unrelated_to_x_does_not_count(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            count = jax.shard_map(lambda b: jax.lax.psum(jnp.ones(()), "data"), mesh=MESH,
                                  in_specs=P("data"), out_specs=P())(x)
            return jnp.sum(x) + 0 * count
    """)
    assert outcome.status == "failed" and "never reads a value computed from x" in outcome.message


def test_a_psum_whose_result_is_dropped_does_not_count(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), "data"), mesh=MESH,
                          in_specs=P("data"), out_specs=P())(x)
            return jnp.sum(x)
    """)
    assert outcome.status == "failed" and "is never used" in outcome.message


def test_an_untraceable_function_cannot_show_its_program(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            return jnp.asarray(float(np.asarray(x).sum()))
    """)
    assert outcome.status == "failed" and "could not be inspected" in outcome.message


def test_avoided_primitives_are_named_when_used(judge) -> None:
    check = AvoidsPrimitives(id="structure.no_gather", title="no all_gather", operations=("all_gather",),
                             why="Gathering copies every block to every device.")
    used = judge(check, """
        def f(x):
            return jax.shard_map(lambda b: jnp.sum(jax.lax.all_gather(b, "data", tiled=True)), mesh=MESH,
                                 in_specs=P("data"), out_specs=P(), check_vma=False)(x)
    """)
    assert used.status == "failed" and "jax.lax.all_gather" in used.message and "Gathering" in used.message
    clean = judge(check, """
        def f(x):
            return jnp.sum(x)
    """)
    assert clean.status == "passed"


BLOCKS = NamedShardingTarget(axis_names=("data", "model"), spec=("data", "model"), mesh_shape=(2, 4))
MATRIX = np.arange(32, dtype=np.float32).reshape(4, 8)


def test_the_layout_of_a_block_sharded_result_matches_its_declaration(judge) -> None:
    body = """
        def f(x):
            return jax.device_put(x, NamedSharding(GRID, P("data", "model"))) * 2
    """
    assert judge(ShardLayout(id="structure.blocks", title="blocks", target=BLOCKS), body, MATRIX).status == "passed"
    assert judge(ResultSharding(id="structure.result", title="result", target=BLOCKS), body, MATRIX).status == "passed"


def test_devices_in_another_order_hold_the_wrong_blocks(judge) -> None:
    outcome = judge(ShardLayout(id="structure.blocks", title="blocks", target=BLOCKS), """
        def f(x):
            backwards = Mesh(np.array(jax.devices()[::-1]).reshape(2, 4), ("data", "model"))
            return jax.device_put(x, NamedSharding(backwards, P("data", "model")))
    """, MATRIX)
    assert outcome.status == "failed"
    assert "holds x[2:4, 6:8], should hold x[0:2, 0:2]" in outcome.message  # device 0 is now last in the grid


def test_a_replicated_result_is_not_the_declared_sharding(judge) -> None:
    body = """
        def f(x):
            return jax.device_put(x, NamedSharding(GRID, P()))
    """
    sharding = judge(ResultSharding(id="structure.result", title="result", target=BLOCKS), body, MATRIX)
    assert sharding.status == "failed" and "its spec is PartitionSpec(), not PartitionSpec('data', 'model')" \
        in sharding.message
    layout = judge(ShardLayout(id="structure.blocks", title="blocks", target=BLOCKS), body, MATRIX)
    assert layout.status == "failed" and "holds x[0:4, 0:8]" in layout.message


def test_a_numpy_result_has_no_layout(judge) -> None:
    outcome = judge(ResultSharding(id="structure.result", title="result", target=BLOCKS), """
        def f(x):
            return np.asarray(x)
    """, MATRIX)
    assert outcome.status == "failed" and "not a JAX array" in outcome.message
