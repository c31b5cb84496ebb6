"""``Donates`` judging a sharded step, on real submissions in a real child (8 simulated
devices): a step jitted with ``in_shardings`` handed an unplaced array (JAX places a copy and
donates that), and a step whose argument is placed with ``jax.device_put`` first. With
``placed=True`` both pass; without it both fail saying truly what was donated."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from conftest import checks_judged

from grader.arguments import Array, Signature
from grader.checks import Donates

HEADER = """\
from functools import partial
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

ROWS = NamedSharding(Mesh(np.array(jax.devices()), ("data",)), P("data"))
"""
SIGNATURE = Signature({"w": Array("float32", "n"), "g": Array("float32", "n")})
PROBE = {"w": np.arange(16, dtype=np.float32) - 5.5, "g": np.arange(16, dtype=np.float32) * 0.25 + 1.0}
STEPS = {
    "in_shardings": """
        step = jax.jit(lambda w, g: w - 0.1 * g, in_shardings=(ROWS, ROWS), out_shardings=ROWS, donate_argnums=0)
        def f(w, g):
            return step(w, g)
    """,
    "placed_first": """
        @partial(jax.jit, donate_argnums=0)
        def step(w, g):
            return w - 0.1 * g
        def f(w, g):
            return step(jax.device_put(w, ROWS), jax.device_put(g, ROWS))
    """,
}
HOW = {"in_shardings": "JAX, on the jit's in_shardings", "placed_first": "your jax.device_put"}


@pytest.fixture
def judge(tmp_path: Path) -> Iterator:
    with checks_judged(tmp_path, HEADER, SIGNATURE, PROBE) as run:
        yield run


def donates(**options) -> Donates:
    return Donates(id="structure.donates_w", title="donates w", **{"argument": "w", **options})


@pytest.mark.slow
@pytest.mark.parametrize("style", sorted(STEPS))
def test_a_sharded_step_donating_the_placed_copy_passes_with_placed(judge, style: str) -> None:
    outcome = judge(donates(placed=True), STEPS[style])
    assert outcome.status == "passed", outcome.message
    assert f"donates w placed on its sharding ({HOW[style]})" in outcome.message
    # g is placed too, but never donated
    assert judge(donates(argument="g", placed=True), STEPS[style]).status == "failed"


@pytest.mark.slow
@pytest.mark.parametrize("style", sorted(STEPS))
def test_without_placed_the_copy_fails_saying_who_placed_it(judge, style: str) -> None:
    outcome = judge(donates(), STEPS[style])
    assert outcome.status == "failed"
    assert f"a copy of w placed on a sharding (by {HOW[style]}), and it is not the w your function was given" \
           in outcome.message, outcome.message
    assert "no output of that program" not in outcome.message


@pytest.mark.slow
def test_a_copy_that_is_no_placement_still_fails_with_placed(judge) -> None:
    outcome = judge(donates(placed=True), """
        @partial(jax.jit, donate_argnums=0)
        def step(w, g):
            return w - 0.1 * g
        def f(w, g):
            return step(jnp.copy(w), g)
    """)
    assert outcome.status == "failed" and "is not the w your function was given" in outcome.message
