"""Program checks (``UsesPrimitive``, ``AvoidsPrimitives``), placement checks and result-layout
checks (``ResultSharding``, ``ShardLayout``) judged on real submissions run in a real child.

Each case is a small submission written to a temporary file, loaded in a sandboxed child with
8 simulated devices; the check reads the real probe call (its recorded program) and the
traced program, exactly as during grading (without the value checks, which cost most of a
grading). Untraceable code is judged from the real call as precisely as traceable code.
"""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from grader.arguments import Array, Scalar, Signature
from grader.checks import (AvoidsPrimitives, Context, CyclicShift, MeshMatches, NamedShardingTarget, OperationCount,
                           PlacedOnNamedSharding, ResultFromPlacement, ResultSharding, ShardLayout, SpecMatches,
                           UsesPrimitive)
from grader.checks.base import Check
from grader.outcome import Outcome
from grader.sandbox.limits import Limits
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
        session = Session(path, "f", ("x",), 8, Limits(call_s=20, total_s=60))
        sessions.append(session)
        assert session.load().ok, session.load().detail
        signature = Signature({"x": Array("float32", tuple(probe.shape))})
        return check.judge(Context(session, signature, {"x": probe}, 0, "f", path.stem, 8))

    yield run
    for session in sessions:
        session.close()


@pytest.mark.slow
def test_a_psum_inside_shard_map_on_the_way_to_the_result_passes(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            return jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), "data"), mesh=MESH,
                                 in_specs=P("data"), out_specs=P())(x)
    """)
    assert outcome.status == "passed", outcome.message


@pytest.mark.slow
def test_psum_without_the_vma_check_binds_another_primitive_and_still_counts(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            return jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), "data"), mesh=MESH,
                                 in_specs=P("data"), out_specs=P(), check_vma=False)(x)
    """)
    assert outcome.status == "passed", outcome.message


@pytest.mark.slow
def test_summing_locally_without_the_collective_fails(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            partial = jax.shard_map(lambda b: jnp.sum(b, keepdims=True), mesh=MESH,
                                    in_specs=P("data"), out_specs=P("data"))(x)
            return jnp.sum(partial)
    """)
    assert outcome.status == "failed" and "never uses jax.lax.psum" in outcome.message


@pytest.mark.slow
def test_a_psum_over_another_axis_fails(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            return jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), "model"), mesh=GRID,
                                 in_specs=P("model"), out_specs=P())(x[:4])
    """)
    assert outcome.status == "failed" and "runs over axes ('model',)" in outcome.message


@pytest.mark.slow
def test_a_psum_of_something_unrelated_to_x_does_not_count(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            count = jax.shard_map(lambda b: jax.lax.psum(jnp.ones(()), "data"), mesh=MESH,
                                  in_specs=P("data"), out_specs=P())(x)
            return jnp.sum(x) + 0 * count
    """)
    assert outcome.status == "failed" and "never reads a value computed from your arguments" in outcome.message


def test_a_psum_whose_result_is_dropped_does_not_count(judge) -> None:
    outcome = judge(PSUM, """
        def f(x):
            jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), "data"), mesh=MESH,
                          in_specs=P("data"), out_specs=P())(x)
            return jnp.sum(x)
    """)
    assert outcome.status == "failed" and "is never used" in outcome.message


@pytest.mark.slow
def test_a_shard_map_body_that_refuses_to_be_staged_cannot_show_its_collectives(judge) -> None:
    """An eager shard_map body runs on tracers too, so one that runs eagerly also stages, unless
    it behaves differently on purpose: then nothing inside it can be credited."""
    outcome = judge(PSUM, """
        def body(b):
            if type(b).__name__ == "DynamicJaxprTracer":
                raise ValueError("not while the grader looks")
            return jax.lax.psum(jnp.sum(b), "data")

        def f(x):
            return jax.shard_map(body, mesh=MESH, in_specs=P("data"), out_specs=P())(x)
    """)
    assert outcome.status == "failed" and "could not be inspected" in outcome.message
    assert "body of your jax.shard_map could not be traced" in outcome.message


@pytest.mark.slow
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


@pytest.mark.slow
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
    assert "holds [2:4, 6:8], should hold [0:2, 0:2]" in outcome.message  # device 0 is now last in the grid


@pytest.mark.slow
def test_a_replicated_result_is_not_the_declared_sharding(judge) -> None:
    body = """
        def f(x):
            return jax.device_put(x, NamedSharding(GRID, P()))
    """
    sharding = judge(ResultSharding(id="structure.result", title="result", target=BLOCKS), body, MATRIX)
    assert sharding.status == "failed" and "its spec is PartitionSpec(), not PartitionSpec('data', 'model')" \
        in sharding.message
    layout = judge(ShardLayout(id="structure.blocks", title="blocks", target=BLOCKS), body, MATRIX)
    assert layout.status == "failed" and "holds [0:4, 0:8]" in layout.message


@pytest.mark.slow
def test_a_numpy_result_has_no_layout(judge) -> None:
    outcome = judge(ResultSharding(id="structure.result", title="result", target=BLOCKS), """
        def f(x):
            return np.asarray(x)
    """, MATRIX)
    assert outcome.status == "failed" and "not a JAX array" in outcome.message


# -- collectives by meaning --------------------------------------------------------------------
PMEAN = UsesPrimitive(id="structure.pmean", title="pmean over data", operation="pmean", axes=("data",),
                      inside="shard_map")


def _mean_body(expression: str) -> str:
    return f"""
        def f(x):
            return jax.shard_map(lambda b: {expression}, mesh=MESH, in_specs=P("data"), out_specs=P())(x)
    """


@pytest.mark.slow
def test_pmean_is_found_by_meaning(judge) -> None:
    assert judge(PMEAN, _mean_body('jax.lax.pmean(jnp.sum(b), "data")')).status == "passed"
    assert judge(PMEAN, _mean_body('jax.lax.psum(jnp.sum(b), "data") / 8')).status == "passed"
    assert judge(PMEAN, _mean_body('jax.lax.psum(jnp.sum(b) / 8, "data")')).status == "passed"
    summed = judge(PMEAN, _mean_body('jax.lax.psum(jnp.sum(b), "data")'))
    assert summed.status == "failed" and "never uses jax.lax.pmean" in summed.message


@pytest.mark.slow
def test_a_mean_scaled_back_up_is_not_a_psum(judge) -> None:
    outcome = judge(PSUM, _mean_body('jax.lax.pmean(jnp.sum(b), "data") * 8'))
    assert outcome.status == "failed" and "averages with a mean" in outcome.message


# -- untraceable code, judged from the real call -----------------------------------------------
MATRIX16 = np.arange(48, dtype=np.float32).reshape(16, 3) - 7.0
ROWS = NamedShardingTarget(axis_names=("data",), spec=("data", None), via="jit_in")
CONSTRAINED = NamedShardingTarget(axis_names=("data",), spec=("data", None), via="constraint", match="derived",
                                  shaped_like="x", inside="jit", label="the squares")


@pytest.mark.parametrize("untraceable", ["print(out.sharding)", "out.block_until_ready()",
                                         "assert len(out.addressable_shards) == 8"])
@pytest.mark.slow
def test_jit_shardings_of_untraceable_code_are_seen_in_the_real_call(judge, untraceable) -> None:
    body = f"""
        SUM = jax.jit(lambda m: jnp.sum(m, axis=0), in_shardings=NamedSharding(MESH, P("data", None)),
                      out_shardings=NamedSharding(MESH, P()))

        def f(x):
            out = SUM(x)
            {untraceable}
            return out
    """
    for check in (PlacedOnNamedSharding(id="structure.in", title="in", target=ROWS),
                  MeshMatches(id="structure.mesh", title="mesh", target=ROWS),
                  SpecMatches(id="structure.spec", title="spec", target=ROWS)):
        outcome = judge(check, body, MATRIX16)
        assert outcome.status == "passed", outcome.message


@pytest.mark.slow
def test_a_constraint_in_untraceable_code_is_seen_and_must_be_on_the_squares(judge) -> None:
    template = """
        @jax.jit
        def energies(m):
            y = m * m
            {constrained}
            return jnp.sum(y, axis=1)

        def f(x):
            out = energies(x)
            print(out.sharding)
            return out
    """
    right = template.format(constrained='y = jax.lax.with_sharding_constraint(y, NamedSharding(MESH, P("data", None)))')
    for check in (PlacedOnNamedSharding(id="structure.c", title="c", target=CONSTRAINED),
                  ResultFromPlacement(id="structure.used", title="used", target=CONSTRAINED)):
        assert judge(check, right, MATRIX16).status == "passed"
    on_input = template.replace("y = m * m", "m = jax.lax.with_sharding_constraint(m, NamedSharding(MESH, "
                                                 "P('data', None)))\n            y = m * m").format(constrained="")
    outcome = judge(PlacedOnNamedSharding(id="structure.c", title="c", target=CONSTRAINED), on_input, MATRIX16)
    assert outcome.status == "failed" and "x itself" in outcome.message
    on_sum = template.replace("return jnp.sum(y, axis=1)", "return jax.lax.with_sharding_constraint("
                                                            "jnp.sum(y, axis=1), NamedSharding(MESH, P('data')))")
    outcome = judge(PlacedOnNamedSharding(id="structure.c", title="c", target=CONSTRAINED),
                    on_sum.format(constrained=""), MATRIX16)
    assert outcome.status == "failed" and "another shape than x" in outcome.message


@pytest.mark.slow
def test_an_eager_untraceable_shard_map_is_judged_from_the_real_call(judge) -> None:
    body = """
        def f(x):
            out = jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), "data"), mesh=MESH,
                                in_specs=P("data"), out_specs=P())(x)
            print(out.sharding, len(out.addressable_shards))
            return out
    """
    assert judge(PSUM, body).status == "passed"
    target = NamedShardingTarget(axis_names=("data",), spec=("data",), via="shard_map_in")
    assert judge(SpecMatches(id="structure.spec", title="spec", target=target), body).status == "passed"


@pytest.mark.parametrize("body, reads", [
    ("""
    @jax.jit
    def f(x, lr):
        return x - lr * x
    """, True),
    ("""
    step = jax.jit(lambda x, lr: x - lr * x)
    def f(x, lr):
        return step(x, jnp.float32(lr))  # made an array through NumPy first: still lr
    """, True),
    ("""
    from functools import partial
    @partial(jax.jit, static_argnums=1)
    def f(x, lr):
        return x - lr * x  # lr is a constant of the compiled program, not data
    """, False),
    ("""
    @jax.jit
    def f(x, lr):
        return x - 0.3 * x  # the probe's lr, as a literal
    """, False),
], ids=["traced", "as_float32_array", "static", "literal"])
def test_a_float_argument_traced_into_a_jitted_function_is_data(tmp_path: Path, body: str, reads: bool) -> None:
    path = tmp_path / "scalar.py"
    path.write_text(HEADER + "\n\n" + textwrap.dedent(body))
    session = Session(path, "f", ("x", "lr"), 8, Limits(call_s=20, total_s=60))
    try:
        assert session.load().ok, session.load().detail
        signature = Signature({"x": Array("float32", (16,)), "lr": Scalar("float")})
        check = UsesPrimitive(id="structure.lr", title="lr scales x", operation="mul", reads="lr")
        outcome = check.judge(Context(session, signature, {"x": PROBE, "lr": 0.3}, 0, "f", path.stem, 8))
    finally:
        session.close()
    assert (outcome.status == "passed") is reads, outcome.message


SHIFT = UsesPrimitive(id="structure.shift", title="shifts by one", operation="ppermute", axes=("data",),
                      inside="shard_map", params={"perm": CyclicShift(1)})


def _shifted(by: int) -> str:
    return f"""
        def f(x):
            def body(b):
                return jax.lax.ppermute(b, "data", [(i, (i + {by}) % 8) for i in range(8)])
            return jax.shard_map(body, mesh=MESH, in_specs=P("data"), out_specs=P("data"))(x)
    """


def test_a_cyclic_shift_by_the_asked_amount_passes(judge) -> None:
    outcome = judge(SHIFT, _shifted(1))
    assert outcome.status == "passed", outcome.message
    assert "with a cyclic shift by +1" in outcome.message


@pytest.mark.parametrize("by, says", [(-1, "a cyclic shift by +7 (that is -1)"), (2, "a cyclic shift by +2")])
def test_a_shift_the_wrong_way_or_too_far_fails_saying_which(judge, by: int, says: str) -> None:
    outcome = judge(SHIFT, _shifted(by))
    assert outcome.status == "failed"
    assert f"Your jax.lax.ppermute has {says}; the task asks for" in outcome.message, outcome.message


def test_a_permutation_that_is_no_shift_is_shown_as_its_pairs(judge) -> None:
    outcome = judge(SHIFT, """
        def f(x):
            perm = [(0, 1), (1, 0), (2, 3), (3, 2), (4, 5), (5, 4), (6, 7), (7, 6)]
            return jax.shard_map(lambda b: jax.lax.ppermute(b, "data", perm), mesh=MESH, in_specs=P("data"),
                                 out_specs=P("data"))(x)
    """)
    assert outcome.status == "failed" and "the permutation 0→1, 1→0, 2→3" in outcome.message, outcome.message


@pytest.mark.parametrize("tiled, passes", [(True, True), (False, False)])
def test_psum_scatter_is_matched_by_its_parameters(judge, tiled: bool, passes: bool) -> None:
    check = UsesPrimitive(id="structure.scatter", title="reduce-scatter", operation="psum_scatter", axes=("data",),
                          inside="shard_map", params={"scatter_dimension": 0, "tiled": True})
    outcome = judge(check, f"""
        def f(x):
            def body(b):
                piece = jax.lax.psum_scatter(jnp.tile(b[:1], 8), "data", scatter_dimension=0, tiled={tiled})
                return piece if {tiled} else piece[None]  # untiled, the scattered axis goes
            return jax.shard_map(body, mesh=MESH, in_specs=P("data"), out_specs=P("data"))(x)
    """)
    assert (outcome.status == "passed") is passes, outcome.message
    if not passes:
        assert "has tiled=False" in outcome.message


GROWS = OperationCount(id="structure.no_unrolled_loop", title="no Python loop over x", grows_with={"x": 0})


@pytest.mark.parametrize("body, passes", [
    ("""
    def f(x):
        return jnp.sum(x)
    """, True),
    ("""
    def f(x):
        return jax.lax.scan(lambda total, v: (total + v, None), jnp.float32(0), x)[0]
    """, True),
    ("""
    @jax.jit
    def f(x):
        total = jnp.float32(0)
        for i in range(x.shape[0]):  # unrolled while tracing: one add per element
            total = total + x[i]
        return total
    """, False),
    ("""
    def f(x):
        total = jnp.float32(0)
        for v in x:  # eager: one operation per element
            total = total + v
        return total
    """, False),
], ids=["sum", "scan", "jitted_python_loop", "eager_python_loop"])
def test_an_operation_count_that_grows_with_the_input_fails(judge, body: str, passes: bool) -> None:
    outcome = judge(GROWS, body)
    assert (outcome.status == "passed") is passes, outcome.message
    if not passes:
        assert "Your program grows with the input" in outcome.message and "x (axis 0) is twice as long" in outcome.message


def test_a_budget_of_operations_names_the_count(judge) -> None:
    check = OperationCount(id="structure.budget", title="few adds", operation="add", at_most=2)
    outcome = judge(check, """
        def f(x):
            return x + 1.0 + 2.0 + 3.0
    """)
    assert outcome.status == "failed" and "Your program performs 3 add operations; the task allows at most 2" \
        in outcome.message, outcome.message


def test_an_eager_vmap_is_judged_from_the_batched_values_it_ran(judge) -> None:
    # jnp.dot under an eager jax.vmap is a jitted function called with batch tracers: the
    # recorder reads the batched arrays behind them, so the dataflow reaches the result.
    check = UsesPrimitive(id="structure.dot", title="a dot reads x", operation="dot_general", reads="x")
    outcome = judge(check, """
        def f(x):
            return jnp.sum(jax.vmap(lambda row: jnp.dot(row, jnp.arange(4.0)))(x.reshape(4, 4)))
    """)
    assert outcome.status == "passed", outcome.message


IN_JIT = UsesPrimitive(id="structure.in_jit", title="the sum inside jit", operation="reduce_sum", inside="jit",
                       reads="x", only_inside=True)


@pytest.mark.parametrize("body, stray", [
    ("""
    @jax.jit
    def f(x):
        return jnp.sum(x * 2.0)
    """, None),
    ("""
    _sum = jax.jit(lambda v: jnp.sum(v))

    def f(x):
        return _sum(jnp.asarray(x, jnp.float32))  # placing and retyping beside jit is no work
    """, None),
    ("""
    _sum = jax.jit(lambda v: jnp.sum(v))

    def f(x):
        return _sum(x * 2.0)  # the doubling runs eagerly: no reduce_sum outside, still work outside
    """, "1 operation outside jax.jit (mul)"),
    ("""
    _sum = jax.jit(lambda v: jnp.sum(v))

    def f(x):
        return _sum(x) + jnp.sum(x) * 0.0  # an eager sum too, on the path through * 0.0
    """, "3 operations outside jax.jit (add, mul, reduce_sum)"),
], ids=["all_inside", "placed_beside", "elementwise_beside", "sum_beside"])
def test_only_inside_counts_every_operation_on_the_path_not_only_the_named_one(judge, body: str,
                                                                              stray: str | None) -> None:
    outcome = judge(IN_JIT, body)
    if stray is None:
        assert outcome.status == "passed", outcome.message
    else:
        assert outcome.status == "failed" and stray in outcome.message, outcome.message


RING = UsesPrimitive(id="structure.ppermute", title="ppermute over data", operation="ppermute", axes=("data",),
                     inside="shard_map")
_RING_STEP = """
    FORWARD = [(j, (j + 1) % 8) for j in range(8)]

    def zero():  # a carry that differs by device, as the totals do
        return jax.lax.pcast(jnp.float32(0), "data", to="varying")

    def step(travelling, total):
        return jax.lax.ppermute(travelling, "data", perm=FORWARD), total + jnp.sum(travelling)
"""


@pytest.mark.slow
@pytest.mark.parametrize("loop", [
    "jax.lax.fori_loop(0, 8, lambda i, c: step(*c), (block, zero()))",
    "jax.lax.fori_loop(0, 8 + (jnp.sum(block) * 0).astype(jnp.int32), lambda i, c: step(*c), "
    "(block, zero()))",
    "jax.lax.scan(lambda c, _: (step(*c), None), (block, zero()), length=8)[0]",
    "jax.lax.while_loop(lambda c: c[2] < 8, lambda c: (*step(c[0], c[1]), c[2] + 1), "
    "(block, zero(), 0))[:2]"])
def test_a_ppermute_whose_output_a_loop_carries_to_the_result_is_on_the_path(judge, loop: str) -> None:
    """A ring: each step adds the block it holds, then passes the block on; the ppermute's output
    reaches the total only through the next step (the carry), in every kind of loop."""
    outcome = judge(RING, _RING_STEP + f"""
    def ring(block):
        _, total = {loop}
        return total[None]

    def f(x):
        return jax.shard_map(ring, mesh=MESH, in_specs=P("data"), out_specs=P("data"))(x)
    """)
    assert outcome.status == "passed", outcome.message


@pytest.mark.slow
def test_a_ppermute_a_loop_carries_but_never_returns_is_not_on_the_path(judge) -> None:
    outcome = judge(RING, _RING_STEP + """
    def ring(block):
        (travelled, _), kept = jax.lax.fori_loop(0, 8, lambda i, c: (step(*c[0]), c[1] + 1.0),
                                                  ((block, zero()), jnp.sum(block)))
        return kept[None]

    def f(x):
        return jax.shard_map(ring, mesh=MESH, in_specs=P("data"), out_specs=P("data"))(x)
    """)
    assert outcome.status == "failed" and "never used" in outcome.message, outcome.message
