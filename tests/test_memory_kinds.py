"""Memory kinds: the recorder keeps where a placement puts a value (``pinned_host``,
``device``), eager or under ``jax.jit``, by a sharding's ``memory_kind`` or a memory space
(``jax.memory.Space.Host``), and a ``Predicate`` judges host offload from ``Observed``'s
placements. Real submissions in a real child (8 simulated CPU devices: JAX's CPU backend has
the device, pinned_host and unpinned_host memories)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from conftest import checks_judged

from grader.arguments import Array, Signature
from grader.checks import Observed, Predicate
from grader.outcome import Outcome

HEADER = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
ON_HOST = NamedSharding(MESH, P("data"), memory_kind="pinned_host")
ON_DEVICE = NamedSharding(MESH, P("data"), memory_kind="device")
"""
SIGNATURE = Signature({"x": Array("float32", "n")})
PROBE = {"x": np.arange(16, dtype=np.float32) - 5.5}


def _offloads_x(seen: Observed) -> bool | Outcome:
    kinds = sorted({str(p.sharding.get("memory_kind")) for p in seen.placements if "x" in p.relation})
    if "pinned_host" in kinds:
        return True
    return Outcome.failed("x is never placed in host memory.", expected="x placed in pinned_host",
                          observed=f"x placed in {', '.join(kinds) or 'no memory'}")


OFFLOADS = Predicate(_offloads_x, "x is offloaded to pinned host memory", id="structure.offloads")
OFFLOADING = {
    "named_sharding": """
        def f(x):
            return jax.device_put(jax.device_put(x, ON_HOST), ON_DEVICE) * 2
    """,
    "memory_space": """
        def f(x):
            return jax.device_put(jax.device_put(x, jax.memory.Space.Host), jax.memory.Space.Device) * 2
    """,
    "inside_jit": """
        @jax.jit
        def f(x):
            return jax.device_put(jax.device_put(x, ON_HOST), ON_DEVICE) * 2
    """,
}


@pytest.fixture
def judge(tmp_path: Path) -> Iterator:
    with checks_judged(tmp_path, HEADER, SIGNATURE, PROBE) as run:
        yield run


@pytest.mark.slow
@pytest.mark.parametrize("style", sorted(OFFLOADING))
def test_a_placement_in_host_memory_is_recorded_and_judged(judge, style: str) -> None:
    outcome = judge(OFFLOADS, OFFLOADING[style])
    assert outcome.status == "passed", (outcome.message, outcome.observed)


@pytest.mark.slow
def test_a_placement_in_device_memory_fails_saying_where(judge) -> None:
    outcome = judge(OFFLOADS, """
        def f(x):
            return jax.device_put(x, ON_DEVICE) * 2
    """)
    assert outcome.status == "failed" and outcome.observed == "x placed in device", outcome.observed
