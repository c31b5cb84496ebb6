"""grader.child.jaxpr_graph (in the child) and grader.observe.program (in the parent): traced programs of
real JAX functions become data whose dataflow answers the structure checks' questions."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from grader.child.jaxpr_graph import program_of
from grader.observe.program import Program

X = jnp.arange(4, dtype=jnp.float32)


def describe(target):
    return {"type": type(target).__name__}


def program(fn) -> Program:
    return Program.from_data(program_of(jax.make_jaxpr(fn)(X), describe, ["x"], ["result"]))


def device_puts(p: Program) -> list[tuple[int | None, int | None, dict]]:
    return [(f.source, f.placed, f.sharding) for f in p.all_placements() if f.via == "device_put"]


def sharding():
    return NamedSharding(Mesh(np.array(jax.devices()[:1]), ("data",)), PartitionSpec())


def feeds_output(p: Program, node_output: int) -> bool:
    return p.feeds(node_output)


def test_sum_of_placed_array_derives_from_the_placement():
    p = program(lambda x: jnp.sum(jax.device_put(x, sharding())))
    [(source, placed, target)] = device_puts(p)
    assert source == p.inputs[0] and target == {"type": "NamedSharding"}
    assert feeds_output(p, placed)


def test_sum_of_the_original_does_not_derive_from_the_placement():
    def fn(x):
        jax.device_put(x, sharding())
        return jnp.sum(x)
    p = program(fn)
    [(_, placed, _)] = device_puts(p)
    assert not feeds_output(p, placed)


def test_dataflow_follows_values_through_jit_and_keeps_calls_apart():
    @jax.jit
    def place(x):
        return jax.device_put(x, sharding())

    def fn(x):
        place(x)  # the same jitted program twice: its values must not be confused
        return jnp.sum(place(x * 2))
    p = program(fn)
    placements = device_puts(p)
    assert len(placements) == 2
    assert [feeds_output(p, placed) for _, placed, _ in placements] == [False, True]
    assert "jit" in p.primitives()


def test_control_flow_links_conservatively():
    def fn(x):
        placed = jax.device_put(x, sharding())
        return jax.lax.cond(x[0] > 0, jnp.sum, lambda v: jnp.float32(0), placed)
    p = program(fn)
    [(_, placed, _)] = device_puts(p)
    assert feeds_output(p, placed)


def test_a_library_jit_is_inlined_without_counting_as_the_students_jit():
    p = program(lambda x: jnp.sum(jax.jit(lambda v: v * 2)(x)) + jnp.cumsum(x)[-1])
    multiplies = [n for n in p.nodes if n.primitive == "mul"]
    assert multiplies and all(n.within == ("jit",) for n in multiplies)
    assert all("jit" not in n.within for n in p.nodes if n.primitive in ("cumsum", "reduce_sum"))


def test_literals_are_recorded_so_a_mean_can_be_told_from_a_sum():
    p = program(lambda x: x / 4.0)
    [divide] = p.uses("div")
    assert divide.literals == {1: 4.0}


def test_malformed_program_data_is_refused():
    import pytest
    good = program_of(jax.make_jaxpr(jnp.sum)(X), describe, ["x"], ["result"])
    for broken in ({**good, "inputs": ["one"]}, {**good, "nodes": [{"primitive": 3}]}, {**good, "input_paths": []},
                   [1, 2]):
        with pytest.raises(ValueError):
            Program.from_data(broken)


def test_a_dtype_parameter_is_recorded_by_name():
    # preferred_element_type (a mixed-precision matmul), a convert's new_dtype: not None
    def fn(x):
        m = x.reshape(2, 2).astype(jnp.bfloat16)
        return jax.lax.dot_general(m, m.T, (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32)
    nodes = program(fn).nodes
    dot = next(n for n in nodes if n.primitive == "dot_general")
    assert dot.params["preferred_element_type"] == "float32", dot.params
    assert any(n.params.get("new_dtype") == "bfloat16" for n in nodes if n.primitive == "convert_element_type")


def three(fn) -> Program:
    """The traced program of ``fn(q, k, v)``, its result a tuple of three."""
    traced = jax.make_jaxpr(fn)(X, X + 1, X + 2)
    return Program.from_data(program_of(traced, describe, ["q", "k", "v"],
                                        ["result[0]", "result[1]", "result[2]"]))


def derived(p: Program, path: str) -> list[str]:
    """The returned leaves that may be computed from the argument ``path``."""
    reached = p.derived_from([p.inputs[p.input_paths.index(path)]])
    return [name for name, o in p.outputs_of() if o in reached]


def test_a_tuple_device_put_links_each_placed_array_to_its_own_operand_only():
    p = three(lambda q, k, v: jax.device_put((q, k, v), sharding()))
    [node] = p.uses("device_put")
    assert len(node.inputs) == 3  # one operation for the three arrays
    assert derived(p, "q") == ["result[0]"] and derived(p, "k") == ["result[1]"]


def test_collectives_of_a_tuple_in_a_jitted_shard_map_follow_each_operand():
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))

    def body(q, k, v):
        a, b = jax.lax.psum((q, k), "data")
        c, d = jax.lax.ppermute((k, v), "data", [(0, 0)])
        e, g = jax.lax.all_gather((q, v), "data", tiled=True)
        return a + c, b + d, e + g + jax.lax.optimization_barrier((q, k))[1]

    step = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(PartitionSpec(),) * 3,
                                 out_specs=(PartitionSpec(),) * 3, check_vma=False))
    p = three(lambda q, k, v: step(*jax.device_put((q, k, v), sharding())))
    assert derived(p, "q") == ["result[0]", "result[2]"]
    assert derived(p, "k") == ["result[0]", "result[1]", "result[2]"]
    assert derived(p, "v") == ["result[1]", "result[2]"]


def test_an_operation_that_mixes_its_operands_still_links_all_of_them():
    p = three(lambda q, k, v: (jnp.concatenate([q, k])[:4], v, v))
    assert derived(p, "k") == ["result[0]"] and derived(p, "v") == ["result[1]", "result[2]"]
