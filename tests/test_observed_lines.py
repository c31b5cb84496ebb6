"""What a structure check's report says it observed: the facts it judged (a missing result leaf
named as missing, the mesh's shape, what the call placed, the operations counted), on real
submissions run in a real child with 8 simulated devices, as in tests/test_program_checks.py."""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from grader.arguments import Array, Signature
from grader.checks import (AvoidsPrimitives, Context, MeshMatches, NamedShardingTarget, OperationCount,
                           PlacedOnNamedSharding, ResultFromPlacement, UsesPrimitive)
from grader.checks.base import Check
from grader.observe.session import Session
from grader.outcome import Outcome
from grader.sandbox.limits import Limits

HEADER = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
GRID = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
"""
PROBE = np.arange(16, dtype=np.float32) - 5.0
X = NamedShardingTarget(axis_names=("data",), spec=("data",), operand="x", match="exact")
W_OUT = NamedShardingTarget(axis_names=("data",), spec=("data",), via="jit_out", operand="result['w']")


@pytest.fixture
def judge(tmp_path: Path) -> Iterator:
    sessions: list[Session] = []

    def run(check: Check, body: str) -> Outcome:
        path = tmp_path / f"case{len(sessions)}.py"
        path.write_text(HEADER + "\n\n" + textwrap.dedent(body))
        session = Session(path, "f", ("x",), 8, Limits(call_s=20, total_s=60))
        sessions.append(session)
        assert session.load().ok, session.load().detail
        signature = Signature({"x": Array("float32", (16,))}, returns={"w": Array("float32", (16,))})
        return check.judge(Context(session, signature, {"x": PROBE}, 0, "f", path.stem, 8))

    yield run
    for session in sessions:
        session.close()


RETURNS_V = """
    def f(x):
        placed = jax.device_put(x, NamedSharding(MESH, P("data")))
        return {"v": placed * 2}
"""


def test_a_result_leaf_that_does_not_exist_is_missing_not_never_used(judge) -> None:
    outcome = judge(ResultFromPlacement(id="structure.w", title="w from x", target=X, result="result['w']"),
                    RETURNS_V)
    assert outcome.status == "failed" and "never used" not in outcome.message, outcome.message
    assert outcome.observed == "result['w'] is missing: your function returned the leaves result['v']"
    assert outcome.message.startswith("result['w'] is missing: "), outcome.message  # the student's own name


def test_a_placement_target_on_a_missing_result_leaf_says_missing(judge) -> None:
    outcome = judge(PlacedOnNamedSharding(id="structure.w_placed", title="w leaves the jit", target=W_OUT),
                    RETURNS_V)
    assert outcome.status == "failed" and "never used" not in outcome.message, outcome.message
    assert outcome.observed == "result['w'] is missing: your function returned the leaves result['v']"


@pytest.mark.slow
def test_a_present_result_leaf_is_still_judged(judge) -> None:
    outcome = judge(ResultFromPlacement(id="structure.w", title="w from x", target=X, result="result['w']"), """
        def f(x):
            placed = jax.device_put(x, NamedSharding(MESH, P("data")))
            return {"w": x * 2, "v": placed}
    """)
    assert outcome.status == "failed" and "never used" in outcome.message and "missing" not in outcome.message


def test_the_mesh_line_shows_the_mesh_shape(judge) -> None:
    grid = NamedShardingTarget(axis_names=("data", "model"), mesh_shape=(4, 2), spec=("data",), operand="x")
    outcome = judge(MeshMatches(id="structure.mesh", title="mesh", target=grid), """
        def f(x):
            return {"w": jax.device_put(x, NamedSharding(GRID, P("data"))) * 2}
    """)
    assert outcome.status == "failed"
    assert outcome.observed.startswith("a mesh of shape (2, 4) over 8 devices"), outcome.observed


IN_SHARD_MAP = NamedShardingTarget(axis_names=("data",), spec=("data",), via="shard_map_in", operand="x")


@pytest.mark.parametrize("jitted", [False, True])
def test_a_shard_map_without_mesh_runs_on_the_devices_of_the_mesh_set_in_context(judge, jitted) -> None:
    # issue #55: it is traced with an abstract mesh (no devices); the concrete one is jax.set_mesh's
    outcome = judge(MeshMatches(id="structure.mesh", title="mesh", target=IN_SHARD_MAP), f"""
        HALF = Mesh(np.array(jax.devices()[4:]), ("data",))

        def f(x):
            with jax.set_mesh(HALF):
                double = jax.shard_map(lambda block: block * 2, in_specs=P("data"), out_specs=P("data"))
                return {{"w": {"jax.jit(double)" if jitted else "double"}(jax.device_put(x, P("data")))}}
    """)
    assert outcome.status == "failed"
    assert outcome.message.startswith("Your mesh holds 4 devices: cpu:4 cpu:5 cpu:6 cpu:7; the task asks for"), outcome.message


def test_an_abstract_mesh_no_context_names_is_said_so_not_shown_as_unknown_devices(judge) -> None:
    outcome = judge(MeshMatches(id="structure.mesh", title="mesh", target=IN_SHARD_MAP), """
        def f(x):
            placed = jax.device_put(x, NamedSharding(MESH, P("data")))
            double = jax.shard_map(lambda block: block * 2, mesh=MESH.abstract_mesh, in_specs=P("data"),
                                   out_specs=P("data"))
            return {"w": double(placed)}
    """)
    assert outcome.status == "failed" and "?" not in outcome.message + outcome.observed, outcome
    assert outcome.message.startswith("Your mesh names no devices (an abstract mesh"), outcome.message
    assert outcome.observed == "an abstract mesh of shape (8,) with axes ('data',), naming no devices"


@pytest.mark.slow
def test_nothing_placed_says_what_the_call_did_place(judge) -> None:
    outcome = judge(PlacedOnNamedSharding(id="structure.x_placed", title="x placed", target=X), """
        def f(x):
            return {"w": jax.device_put(x * 2, NamedSharding(GRID, P("model")))}
    """)
    assert outcome.status == "failed"
    assert outcome.observed.endswith("(what it placed: a value of x's shape computed from it by jax.device_put onto "
                                     "NamedSharding(mesh over [cpu:0, cpu:1, cpu:2, cpu:3, cpu:4, cpu:5, cpu:6, "
                                     "cpu:7] with axes ('data', 'model'), PartitionSpec('model')))"), outcome.observed


@pytest.mark.slow
def test_program_checks_count_what_the_program_performs(judge) -> None:
    loop = """
        def f(x):
            total = jnp.float32(0)
            for i in range(4):
                total = total + x[i] * 2.0
            return {"w": x + total}
    """
    missing = judge(UsesPrimitive(id="structure.scan", title="scan", operation="scan"), loop)
    assert missing.status == "failed" and missing.observed.startswith("no jax.lax.scan among the program's ")
    assert " mul" in missing.observed and " add" in missing.observed, missing.observed
    counted = judge(OperationCount(id="structure.count", title="count", at_most=3), loop)
    assert counted.status == "failed" and counted.observed.split(":")[0].endswith("operations"), counted.observed
    assert "4 mul" in counted.observed, counted.observed
    avoided = judge(AvoidsPrimitives(id="structure.no_mul", title="no mul", operations=("mul",)), loop)
    assert avoided.status == "failed" and avoided.observed.startswith("4 mul among the program's "), avoided.observed
