"""grader.child.recorder: what a real call did, seen whole. Real children with 8 simulated
devices, real submissions written to temporary files, read through the session's replies.

- every call of a jitted function is in the record, repeats served by JAX's caches included,
  each with whether it was traced, compiled or served from cache;
- work done on the host in the middle of the JAX work (callbacks whose results are used,
  values pulled to NumPy and given back) is recorded, and custom derivative rules, logging
  callbacks and a debug print are not;
- a capturing call keeps what the placing operations received, and a feeding call hands them
  those values instead, saying how many it met.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from grader.observe.session import Counterfactual, Session
from grader.sandbox.limits import Limits

HEADER = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

ONE = NamedSharding(Mesh(np.array(jax.devices()[:1]), ("data",)), P())
"""
PROBE = {"x": np.arange(8, dtype=np.float32) - 2.5}


@pytest.fixture
def session(tmp_path: Path) -> Iterator:
    opened: list[Session] = []

    def load(body: str) -> Session:
        path = tmp_path / f"case{len(opened)}.py"
        path.write_text(HEADER + "\n\n" + textwrap.dedent(body))
        made = Session(path, "f", ("x",), 8, Limits(call_s=30, total_s=120))
        opened.append(made)
        assert made.load().ok, made.load().detail
        return made

    yield load
    for made in opened:
        made.close()


def statuses(returned, name: str) -> list[str]:
    return [call.status for call in returned.jit_calls if call.name == name]


def test_every_call_of_a_jitted_step_in_a_loop_is_recorded_with_its_cache_status(session) -> None:
    loaded = session("""
        @jax.jit
        def step(a):
            return a * 0.5 + 1.0

        def f(x):
            a = jax.device_put(x, ONE)
            for _ in range(4):
                a = step(a)
            return a
    """)
    first = loaded.call(PROBE)
    assert first.ok, first.error
    assert statuses(first, "step") == ["traced", "cached", "cached", "cached"]
    again = loaded.call(PROBE)  # the same shapes: JAX's C++ fast path would serve all four unseen
    assert statuses(again, "step") == ["cached"] * 4
    other = loaded.call({"x": np.ones(3, np.float32)})
    assert statuses(other, "step")[0] == "traced"  # a new shape is a new trace


def test_after_a_full_record_jax_functions_get_their_fast_path_back_and_the_students_do_not(session) -> None:
    # A full record gives JAX's C++ dispatch no fast-path data, and it then sends those shapes
    # back to Python for good: every jnp function of every later call would pay for it.
    loaded = session("""
        @jax.jit
        def step(a):
            return a * 0.5

        def f(x):
            return jnp.sum(step(jax.device_put(x, ONE)))
    """)
    assert loaded.call(PROBE, record="full").ok
    loaded.call(PROBE)  # JAX's own sum is given its fast path again here
    later = loaded.call(PROBE)
    assert [(call.name, call.own) for call in later.jit_calls] == [("step", True)]  # jnp.sum: unseen, served in C++


def test_a_helper_jitted_once_and_called_on_two_equal_shapes_is_seen_both_times(session) -> None:
    loaded = session("""
        @jax.jit
        def total(a):
            return jnp.sum(a)

        def f(x):
            a = jax.device_put(x, ONE)
            b = jax.device_put(x * 2.0, ONE)
            return total(a) + total(b)
    """)
    returned = loaded.call(PROBE)
    assert statuses(returned, "total") == ["traced", "cached"]
    placed_into_jit = [p for p in returned.placements if p["via"] == "device_put"]
    assert len(placed_into_jit) == 2


@pytest.mark.parametrize("body, kind, says", [
    ("""
        def f(x):
            a = jax.device_put(x, ONE)
            return jax.pure_callback(lambda v: np.asarray(v) * 2, jax.ShapeDtypeStruct(a.shape, a.dtype), a)
    """, "callback", "jax.pure_callback"),
    ("""
        from jax.experimental import io_callback

        @jax.jit
        def f(x):
            return io_callback(lambda v: np.asarray(v) + 1, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    """, "callback", "io_callback"),
    ("""
        @jax.jit
        def f(x):
            halves = jax.pure_callback(on_host, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
            jax.debug.print("sum {}", x.sum())  # a log beside it changes nothing
            return halves + 1

        def on_host(v):
            return np.asarray(v) / 2
    """, "callback", "jax.pure_callback on_host, giving float32[8], whose result your function goes on to use"),
    ("""
        def f(x):
            a = jax.device_put(x, ONE)
            return jax.pure_callback(lambda v: np.asarray(v) * 2, jax.ShapeDtypeStruct(a.shape, a.dtype), a)
    """, "callback", "jax.pure_callback <lambda>, giving float32[8]"),
    ("""
        def f(x):
            a = jax.device_put(x, ONE)
            total = np.asarray(a).sum()
            return jnp.asarray(total)
    """, "round_trip", "pulled to NumPy"),
    ("""
        def f(x):
            a = jax.device_put(x, ONE)
            return jnp.asarray(float(a[0]) * np.ones(3, np.float32))
    """, "round_trip", "pulled to NumPy"),
])
@pytest.mark.slow
def test_work_on_the_host_is_recorded(session, body: str, kind: str, says: str) -> None:
    returned = session(body).call(PROBE)
    assert returned.ok, returned.error
    assert [w.kind for w in returned.host] == [kind], returned.host
    assert says in returned.host[0].call


@pytest.mark.slow
@pytest.mark.parametrize("pull", ["[np.asarray(row) for row in a]  # PULLS", "[row for row in a]  # PULLS",
                                  "[float(v) for v in a]  # PULLS"])
def test_a_round_trip_names_the_submissions_line_that_pulled(session, tmp_path: Path, pull: str) -> None:
    # iterating over a sharded array pulls inside JAX: the line named is the submission's own
    loaded = session(f"""
        ROWS = NamedSharding(Mesh(np.array(jax.devices()), ("data",)), P("data"))

        def f(x):
            a = jax.device_put(x, ROWS)
            rows = {pull}
            return jnp.asarray(np.stack([np.asarray(r, np.float32) for r in rows]))
    """)
    returned = loaded.call(PROBE)
    assert returned.ok, returned.error
    line = next(n for n, text in enumerate(loaded.submission.read_text().splitlines(), 1) if "# PULLS" in text)
    work = returned.host[0]  # the first value given back to JAX after the pull
    assert work.kind == "round_trip" and f"pulled to NumPy at {loaded.submission.name}:{line} (" in work.call, \
        work.call


@pytest.mark.parametrize("body", ["""
        def f(x):
            a = jax.device_put(x, ONE)
            jax.debug.print("total {}", jnp.sum(a))
            print(a.sharding)
            return jnp.sum(jax.nn.relu(a)) + jnp.sum(jax.nn.softplus(a))
    """, """
        from jax.experimental import io_callback

        LOG = []

        @jax.jit
        def f(x):  # an ordered io_callback that logs a metric: its result feeds nothing
            io_callback(lambda t: LOG.append(float(t)) or np.int32(0), jax.ShapeDtypeStruct((), jnp.int32),
                        jnp.sum(x), ordered=True)
            jax.debug.callback(lambda t: LOG.append(float(t)), jnp.max(x))
            return x * 2
    """, """
        @jax.custom_vjp
        def double(a):
            return a * 2

        def forward(a):
            return a * 2, None

        def backward(_, g):
            return (g * 2,)

        double.defvjp(forward, backward)

        def f(x):  # a custom derivative rule is ordinary JAX: its primal is in the program
            return double(jax.device_put(x, ONE))
    """])
def test_library_rules_logging_callbacks_custom_rules_and_a_printed_sharding_are_not_host_work(session,
                                                                                                body: str) -> None:
    returned = session(body).call(PROBE, record="full")
    assert returned.ok, returned.error
    assert returned.host == ()


@pytest.mark.slow
def test_a_fed_call_hands_the_placements_what_a_capturing_call_placed(session) -> None:
    other = {"x": np.full(8, 3.0, np.float32)}
    honest = session("""
        def f(x):
            return jnp.sum(jax.device_put(x, ONE))
    """)
    captured = honest.call(other, counterfactual=Counterfactual(True))
    fed = honest.call(PROBE, counterfactual=Counterfactual(False))
    assert captured.swapped == 1 and fed.swapped == 1 and fed.number() == captured.number() == 24.0
    assert [a for a, _ in honest.calls] == [other]  # a fed answer is not the function's answer on the probe
    dead_link = session("""
        def f(x):
            return jnp.sum(x) + 0 * jnp.sum(jax.device_put(x, ONE))
    """)
    dead_link.call(other, counterfactual=Counterfactual(True))
    fed = dead_link.call(PROBE, counterfactual=Counterfactual(False))
    assert fed.swapped == 1 and fed.number() == float(PROBE["x"].sum())



def test_what_a_capture_keeps_survives_a_step_that_donates_the_placed_value(session) -> None:
    # device_put may keep the buffer of an array already where it is sent, and the jitted step
    # then donates it: the capture keeps its own copy, so the feeding call still has the values
    other = {"x": np.full(8, 3.0, np.float32)}
    donating = session("""
        import functools
        @functools.partial(jax.jit, donate_argnums=0)
        def step(p):
            return p * 2.0
        def f(x):
            return jnp.sum(step(jax.device_put(jnp.asarray(x), ONE)))
    """)
    captured = donating.call(other, counterfactual=Counterfactual(True))
    fed = donating.call(PROBE, counterfactual=Counterfactual(False))
    assert fed.ok, fed.describe()
    assert captured.swapped == 1 and fed.swapped == 1 and fed.number() == captured.number() == 48.0

@pytest.mark.slow
def test_a_jitted_function_that_places_its_operand_is_fed_too(session) -> None:
    other = {"x": np.ones(8, np.float32)}
    placing = session("""
        @jax.jit
        def f(x):
            return jnp.sum(jax.lax.with_sharding_constraint(x * 1.0, ONE))
    """)
    placing.call(other, counterfactual=Counterfactual(True))
    fed = placing.call(PROBE, counterfactual=Counterfactual(False))
    assert fed.swapped == 1 and fed.number() == 8.0
    unplaced = session("""
        def f(x):
            return jnp.sum(x)
    """)
    assert unplaced.call(other, counterfactual=Counterfactual(True)).swapped == 0


def test_a_device_put_onto_another_sharding_is_not_fed(session) -> None:
    loaded = session("""
        ALL = NamedSharding(Mesh(np.array(jax.devices()), ("data",)), P())

        def f(x):
            jax.device_put(x, ONE)  # placed as asked, then the original moved elsewhere and used
            return jnp.sum(jax.device_put(x, ALL))
    """)
    one = {"type": "NamedSharding", "mesh_devices": [0], "mesh_shape": [1], "axis_names": ["data"], "spec": [],
           "memory_kind": "device", "axis_types": ["Auto"]}  # as the child describes ONE (a Mesh(...): Auto axes)
    loaded.call({"x": np.ones(8, np.float32)}, counterfactual=Counterfactual(True, one))
    fed = loaded.call(PROBE, counterfactual=Counterfactual(False, one))
    assert fed.swapped == 1 and fed.number() == float(PROBE["x"].sum())


@pytest.mark.parametrize("cut, via", [
    ("lambda index: x[index]", None),  # slices of the argument: x itself, placed
    ("lambda index: HOST[index]", "round_trip"),  # a NumPy copy of x: a value through the host
])
def test_an_array_assembled_from_pieces_during_the_call_is_a_placement(session, cut: str, via: str | None) -> None:
    returned = session(f"""
        ROWS = NamedSharding(Mesh(np.array(jax.devices()), ("data",)), P("data"))

        def f(x):
            global HOST
            HOST = np.asarray(x)
            return jax.make_array_from_callback(x.shape, ROWS, {cut})
    """).call(PROBE, record="full")
    assert returned.ok, returned.error
    [placement] = [p for p in returned.program.all_placements() if p.via == "device_put"]
    assert placement.sharding["spec"] == ["data"] and placement.placed in returned.program.outputs
    assert (placement.source == returned.program.inputs[0]) is (via is None)
    assert [w.kind for w in returned.host] == ([via] if via else [])
    if via:
        assert "jax.make_array_from_callback" in returned.host[0].call


MOVE = Path(__file__).resolve().parent.parent / "exercises" / "move_between_shardings"


@pytest.mark.slow
@pytest.mark.parametrize("variant, runs", [("right/donating_device_put.py", True),
                                           ("wrong/limits_reads_donated.py", False)])
def test_a_donating_move_crashes_under_the_grader_only_where_it_crashes_alone(variant: str, runs: bool) -> None:
    # JAX 0.10 segfaults reading an array a device_put moved to other devices with donate=True:
    # the grader never does, so the same file returns under it exactly when it returns alone
    path = MOVE / variant
    alone = subprocess.run(
        [sys.executable, "-c", f"import runpy, jax.numpy as jnp; runpy.run_path({str(path)!r})"
                               "['move_to_second_half'](jnp.arange(12.0)).block_until_ready()"],
        env={**os.environ, "JAX_NUM_CPU_DEVICES": "8", "JAX_PLATFORMS": "cpu"}, capture_output=True, timeout=120)
    assert (alone.returncode == 0) is runs, alone.stderr[-500:]
    graded = Session(path, "move_to_second_half", ("x",), 8, Limits(call_s=30, total_s=120))
    try:
        assert graded.load().ok
        for record in ("placements", "full"):
            returned = graded.call({"x": np.arange(12, dtype=np.float32)}, record=record)
            assert returned.ok is runs, returned.describe()
            if runs:
                np.testing.assert_array_equal(returned.leaf("result").array, np.arange(12))
    finally:
        graded.close()
