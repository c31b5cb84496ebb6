"""grader.child.compiled and grader.checks.compiled_program, on real children with 8
simulated devices: the collectives XLA compiled (the ones the SPMD partitioner inserts too),
their bytes per device, each program's memory per device, and the checks that judge them, on
the reduce_scatter_grads exercise and solutions in styles its variants do not have. Factory
signatures (``make_step()``) are judged on no_recompile."""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from grader import find_exercise, grade
from grader.observe.session import Session
from grader.sandbox.limits import Limits

HEADER = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
"""
PROBE = {"x": np.arange(64, dtype=np.float32).reshape(16, 4)}


@pytest.fixture
def recorded(tmp_path: Path) -> Iterator:
    opened: list[Session] = []

    def call(body: str, probe: dict = PROBE):
        path = tmp_path / f"case{len(opened)}.py"
        path.write_text(HEADER + "\n\n" + textwrap.dedent(body))
        session = Session(path, "f", tuple(probe), 8, Limits(call_s=30, total_s=120))
        opened.append(session)
        assert session.load().ok, session.load().detail
        returned = session.call(probe, record="full")
        assert returned.ok, returned.error
        return returned

    yield call
    for session in opened:
        session.close()


def kinds(returned) -> list[tuple[str, int]]:
    return [(c.kind, c.bytes) for program in returned.programs for c in program.collectives]


def test_the_all_reduce_xla_inserts_for_a_sum_over_a_split_axis_is_seen_with_its_bytes(recorded) -> None:
    returned = recorded("""
        @jax.jit
        def total(placed):
            return jax.lax.with_sharding_constraint(placed.sum(0), NamedSharding(MESH, P()))
        def f(x):
            return total(jax.device_put(x, NamedSharding(MESH, P("data"))))
    """)
    own = [p for p in returned.programs if p.own]
    assert [p.function.split(" at ")[0] for p in own] == ["total"]
    assert kinds(returned) == [("all-reduce", 16)]  # four float32 sums, on every device
    assert own[0].memory.argument == 16 * 4 * 4 // 8  # each device's rows of x


@pytest.mark.parametrize("dtype, size", [("jnp.bfloat16", 2), ("jnp.float32", 4)])
def test_a_psum_is_counted_at_the_dtype_the_program_asked_for(recorded, dtype: str, size: int) -> None:
    """The CPU backend runs a bfloat16 all-reduce in float32; the bytes are the bfloat16 ones, so a
    gradient compressed before its psum is seen to move half as much."""
    returned = recorded(f"""
        def f(x):
            summed = jax.shard_map(lambda b: jax.lax.psum(b.astype({dtype}), "data"), mesh=MESH,
                                   in_specs=P("data"), out_specs=P())
            return jax.jit(summed)(x)
    """)
    assert kinds(returned) == [("all-reduce", 2 * 4 * size)]  # each device's (2, 4) block, summed


@pytest.mark.slow
def test_a_reduce_scatter_an_eager_shard_map_and_a_loop_of_calls_are_each_counted(recorded) -> None:
    scattered = recorded("""
        def f(x):
            body = lambda block: jax.lax.psum_scatter(block, "data", scatter_dimension=0, tiled=True)
            return jax.shard_map(body, mesh=MESH, in_specs=P(), out_specs=P("data"))(x)
    """)
    assert kinds(scattered) == [("reduce-scatter", 2 * 4 * 4)]  # eager: JAX's own program, still seen
    looped = recorded("""
        @jax.jit
        def step(x):
            return jax.lax.with_sharding_constraint(x * 2.0, NamedSharding(MESH, P()))
        def f(x):
            placed = jax.device_put(x, NamedSharding(MESH, P("data")))
            for _ in range(3):
                placed = step(placed)
            return placed
    """)
    steps = [p for p in looped.programs if p.own]
    assert [(p.runs, [c.kind for c in p.collectives]) for p in steps] == [(1, ["all-gather"]), (2, [])]
    assert sum(p.communicated for p in looped.programs) == 16 * 4 * 4  # gathered once; then already replicated


@pytest.mark.slow
def test_an_eager_collective_in_a_python_loop_counts_every_run(recorded) -> None:
    # In a full record the programs JAX runs inside an eager operation keep their fast path
    # only while they move nothing: an all-reduce's runs are its traffic.
    looped = recorded("""
        def f(x):
            placed = jax.device_put(x, NamedSharding(MESH, P("data")))
            for _ in range(3):
                total = jax.lax.reduce_sum(placed, axes=(0,))  # eager: an all-reduce over "data"
            return total
    """)
    moving = [p for p in looped.programs if p.collectives]
    assert [(p.runs, [c.kind for c in p.collectives]) for p in moving] == [(3, ["all-reduce"])]
    assert sum(p.communicated for p in looped.programs) == 3 * 4 * 4  # the four column sums, thrice



def test_a_collective_in_the_condition_of_a_loop_the_data_ends_runs_unbounded(recorded) -> None:
    # Issue #64: a loop's condition was counted as running once; it runs once more than the body,
    # here a number of times only the data decides.
    looped = recorded("""
        @jax.jit
        def f(x):
            def total(rows):
                stop = 3 + (jnp.sum(rows) * 0).astype(jnp.int32)
                more = lambda s: s[0] + (jax.lax.psum(s[1][0, 0], "data") * 0).astype(jnp.int32) < stop
                return jax.lax.while_loop(more, lambda s: (s[0] + 1, s[1] + rows), (0, rows))[1]
            return jax.shard_map(total, mesh=MESH, in_specs=P("data"), out_specs=P("data"))(x)
    """)
    assert [c.times for p in looped.programs for c in p.collectives if c.kind == "all-reduce"] == [None]


@pytest.mark.parametrize("when", ["at_import", "in_the_call"])
def test_an_executable_compiled_ahead_of_time_is_the_submissions_own_program(recorded, when: str) -> None:
    # lower(...).compile() and its call: the same program, memory and collectives as the jitted
    # call would show, named by the function it was traced from
    body = """
        def total(placed):
            return jax.lax.with_sharding_constraint(placed.sum(0), NamedSharding(MESH, P()))
        SHARDED = NamedSharding(MESH, P("data"))
        {compile_at_import}
        def f(x):
            placed = jax.device_put(x, SHARDED)
            compiled = COMPILED or jax.jit(total).lower(placed).compile()
            return compiled(placed)
    """
    at_import = "COMPILED = jax.jit(total).lower(jax.ShapeDtypeStruct((16, 4), jnp.float32, sharding=SHARDED)).compile()"
    returned = recorded(body.format(compile_at_import=at_import if when == "at_import" else "COMPILED = None"))
    own = [p for p in returned.programs if p.own]
    assert [p.function.split(" at ")[0] for p in own] == ["total"], returned.programs
    assert kinds(returned) == [("all-reduce", 16)]
    assert own[0].memory.argument == 16 * 4 * 4 // 8


@pytest.mark.slow
def test_rematerialisation_shows_in_the_temporary_bytes(recorded) -> None:
    probe = {"ws": np.full((16, 32, 32), 0.01, np.float32), "x": np.ones((64, 32), np.float32)}
    body = """
        def layer(c, w):
            return jnp.tanh(c @ w), None
        @jax.jit
        def f(ws, x):
            return jax.grad(lambda ws: jnp.sum(jax.lax.scan({layer}, x, ws)[0] ** 2))(ws)
    """
    plain = recorded(body.format(layer="layer"), probe)
    remat = recorded(body.format(layer="jax.checkpoint(layer)"), probe)
    temp = [max(p.memory.temp for p in returned.programs if p.own) for returned in (plain, remat)]
    assert temp[1] < temp[0] / 2, temp


@pytest.fixture(scope="module")
def reduce_scatter():
    return find_exercise("reduce_scatter_grads")


def judged(exercise, tmp_path: Path, source: str, *check_ids: str):
    path = tmp_path / "solution.py"
    path.write_text(textwrap.dedent(source))
    report = grade(exercise, path, compile_cache=False)
    return [next(c for c in report.checks if c.id == check_id) for check_id in check_ids]


def test_a_gather_xla_inserts_for_a_replicated_result_fails_the_communication_checks(reduce_scatter,
                                                                                    tmp_path: Path) -> None:
    # the jaxpr holds one psum_scatter; the out_shardings make XLA gather its result onto every device
    uses, traffic = judged(reduce_scatter, tmp_path, '''
        import jax, numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        MESH = Mesh(np.array(jax.devices()), ("data",))
        def _scatter(rows):
            return jax.lax.psum_scatter(rows[0], "data", scatter_dimension=0, tiled=True)
        STEP = jax.jit(jax.shard_map(_scatter, mesh=MESH, in_specs=P("data"), out_specs=P("data")),
                       out_shardings=NamedSharding(MESH, P()))
        def reduce_scatter_grads(grads):
            return STEP(grads)
    ''', "structure.compiled_reduce_scatter", "structure.traffic")
    assert uses.status == "failed" and "an all-gather of 64 bytes per device" in uses.message, uses.message
    assert traffic.status == "failed" and "at most 8 bytes (1/64 of the 512 bytes of grads)" in traffic.message


def test_a_reduce_scatter_in_a_helper_module_style_passes(reduce_scatter, tmp_path: Path) -> None:
    uses, traffic = judged(reduce_scatter, tmp_path, '''
        import jax, jax.numpy as jnp, numpy as np
        from functools import partial
        from jax.sharding import Mesh, PartitionSpec as P
        @partial(jax.jit, static_argnums=1)
        def _reduce(grads, axis):
            mesh = Mesh(np.array(jax.devices()), (axis,))
            body = lambda g: jax.lax.psum_scatter(g.reshape(-1), axis, tiled=True)
            return jax.shard_map(body, mesh=mesh, in_specs=P(axis), out_specs=P(axis))(grads)
        def reduce_scatter_grads(grads):
            return _reduce(grads, "data")
    ''', "structure.compiled_reduce_scatter", "structure.traffic")
    assert uses.status == "passed", uses.message
    assert traffic.status == "passed" and "8 bytes per device" in traffic.message, traffic.message


@pytest.fixture(scope="module")
def no_recompile():
    return find_exercise("no_recompile")


@pytest.mark.slow
@pytest.mark.parametrize("source, words", [
    ('''
     def make_step():
         raise RuntimeError("configure me first")
     ''', "Calling make_step() raised an error"),
    ('''
     def make_step():
         return 0.1
     ''', "make_step() returned a float, not a function"),
    ('''
     def make_step():
         return lambda w, x: (w, x)
     ''', "(returned by make_step()) cannot be called with 4 arguments"),
], ids=["factory_raises", "returns_no_function", "made_function_wrong_arity"])
def test_a_factory_that_gives_no_usable_step_is_a_load_failure_that_says_why(no_recompile, tmp_path: Path,
                                                                             source: str, words: str) -> None:
    load, values = judged(no_recompile, tmp_path, source, "load.function", "value.random_steps")
    assert load.status == "failed" and words in load.message, load.message
    assert values.status == "skipped"


def test_a_factory_made_step_is_called_as_often_as_the_checks_need(no_recompile, tmp_path: Path) -> None:
    # the factory runs once; the step it returns counts its own calls
    checks = judged(no_recompile, tmp_path, '''
        import jax, jax.numpy as jnp
        MADE = []
        def make_step():
            MADE.append(1)
            assert len(MADE) == 1, "make_step() called twice"
            @jax.jit
            def step(w, x, y, lr):
                loss, grad = jax.value_and_grad(lambda v: jnp.mean((x @ v - y) ** 2))(w)
                return w - lr * grad, loss
            return step
    ''', "load.function", "type.new_w_and_loss", "value.random_steps", "structure.compiles_once")
    assert [c.status for c in checks] == ["passed"] * 4, [c.message for c in checks]
    assert checks[0].message.startswith("make_step() returns step(w, x, y, lr), which takes 4 arguments")


@pytest.fixture(scope="module")
def memory_per_device():
    return find_exercise("memory_per_device")


@pytest.mark.slow
def test_an_eighth_per_device_on_a_mesh_the_variants_lack_passes(memory_per_device, tmp_path: Path) -> None:
    # a 4 x 2 mesh with its axes named in the other order, the spec naming them backwards
    holds, host = judged(memory_per_device, tmp_path, '''
        import jax, numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        def shard_params(w):
            mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("b", "a"))
            return jax.device_put(w, NamedSharding(mesh, P("a", "b")))
    ''', "structure.an_eighth_each", "structure.no_host_work")
    assert holds.status == "passed" and "1/8 of it), over 8 devices" in holds.message, holds.message
    assert host.status == "passed", host.message


def test_a_copy_through_the_host_fails_the_host_check(memory_per_device, tmp_path: Path) -> None:
    holds, host = judged(memory_per_device, tmp_path, '''
        import jax, numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        def shard_params(w):
            mesh = Mesh(np.array(jax.devices()), ("d",))
            return jax.device_put(np.array(w, copy=True), NamedSharding(mesh, P(None, "d")))
    ''', "structure.an_eighth_each", "structure.no_host_work")
    assert holds.status == "passed", holds.message
    assert host.status == "failed" and "a JAX array pulled to NumPy" in host.message, host.message


@pytest.mark.slow
def test_a_quarter_on_each_of_four_devices_fails_the_share(memory_per_device, tmp_path: Path) -> None:
    holds, = judged(memory_per_device, tmp_path, '''
        import jax, numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        def shard_params(w):
            return jax.device_put(w, NamedSharding(Mesh(np.array(jax.devices()[4:]), ("d",)), P(None, "d")))
    ''', "structure.an_eighth_each")
    assert holds.status == "failed" and "1/4 of it), over 4 devices" in holds.message, holds.message
    assert "of the 1.5 KiB of your result (1/4" in holds.message, holds.message
