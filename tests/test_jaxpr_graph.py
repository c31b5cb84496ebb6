"""grader.observe.jaxpr_graph (in the child) and grader.observe.program (in the parent): traced programs of
real JAX functions become data whose dataflow answers the structure checks' questions."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from grader.observe.jaxpr_graph import program_of
from grader.observe.program import Program

X = jnp.arange(4, dtype=jnp.float32)


def describe(target):
    return {"type": type(target).__name__}


def program(fn) -> Program:
    return Program.from_data(program_of(jax.make_jaxpr(fn)(X), describe))


def sharding():
    return NamedSharding(Mesh(np.array(jax.devices()[:1]), ("data",)), PartitionSpec())


def feeds_output(p: Program, node_output: int) -> bool:
    return p.outputs[0] in p.derived_from([node_output])


def test_sum_of_placed_array_derives_from_the_placement():
    p = program(lambda x: jnp.sum(jax.device_put(x, sharding())))
    [(source, placed, target)] = p.placements()
    assert source == p.inputs[0] and target == {"type": "NamedSharding"}
    assert feeds_output(p, placed)


def test_sum_of_the_original_does_not_derive_from_the_placement():
    def fn(x):
        jax.device_put(x, sharding())
        return jnp.sum(x)
    p = program(fn)
    [(_, placed, _)] = p.placements()
    assert not feeds_output(p, placed)


def test_dataflow_follows_values_through_jit_and_keeps_calls_apart():
    @jax.jit
    def place(x):
        return jax.device_put(x, sharding())

    def fn(x):
        place(x)  # the same jitted program twice: its values must not be confused
        return jnp.sum(place(x * 2))
    p = program(fn)
    placements = p.placements()
    assert len(placements) == 2
    assert [feeds_output(p, placed) for _, placed, _ in placements] == [False, True]
    assert "jit" in p.primitives()


def test_control_flow_links_conservatively():
    def fn(x):
        placed = jax.device_put(x, sharding())
        return jax.lax.cond(x[0] > 0, jnp.sum, lambda v: jnp.float32(0), placed)
    p = program(fn)
    [(_, placed, _)] = p.placements()
    assert feeds_output(p, placed)
