"""grader.child.callbacks: a program that logs (jax.debug.print, jax.debug.callback, an
io_callback or pure_callback whose result nothing reads) is handed over without its callbacks,
so it exports, runs anywhere, computes the same values and keeps its collectives; a callback
whose result the program uses stays, and is named with the value it gives."""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback
from jax.extend.core import jaxpr_as_fun
from jax.sharding import PartitionSpec as P

from grader.child.callbacks import holds_callback, read_callbacks, without_unread_callbacks

MESH = jax.make_mesh((len(jax.devices()),), ("data",), axis_types=(jax.sharding.AxisType.Auto,))
X = jnp.arange(8 * len(jax.devices()), dtype=jnp.float32)
LOG: list[float] = []


def _record(total):
    LOG.append(float(total))
    return np.int32(len(LOG))


def _logging_body(block):
    jax.debug.print("block mean {m}", m=block.mean())
    jax.debug.callback(lambda n: LOG.append(float(n)), jnp.linalg.norm(block))
    io_callback(_record, jax.ShapeDtypeStruct((), jnp.int32), block.sum(), ordered=True)
    jax.pure_callback(lambda b: np.asarray(b), jax.ShapeDtypeStruct(block.shape, block.dtype), block)
    return jax.lax.psum(block * 2, "data")


LOGGING = jax.jit(jax.shard_map(_logging_body, mesh=MESH, in_specs=P("data"), out_specs=P()))


def _exported(program) -> jax.export.Exported:
    return jax.export.export(jax.jit(jaxpr_as_fun(program)))(jax.ShapeDtypeStruct(X.shape, X.dtype))


def test_a_program_that_only_logs_exports_without_callbacks_and_keeps_its_all_reduce() -> None:
    traced = jax.make_jaxpr(LOGGING)(X)
    assert holds_callback(traced) and read_callbacks(traced) == []
    pruned = without_unread_callbacks(traced)
    assert not holds_callback(pruned)
    text = _exported(pruned).mlir_module()
    assert "stablehlo.all_reduce" in text
    assert not [t for t in re.findall(r"custom_call @([\w.]+)", text) if "callback" in t], text
    np.testing.assert_array_equal(jaxpr_as_fun(pruned)(X)[0], LOGGING(X))


def test_a_program_without_callbacks_is_handed_over_as_it_is() -> None:
    traced = jax.make_jaxpr(jax.jit(lambda x: x * 2))(X)
    assert without_unread_callbacks(traced) is traced


def test_a_callback_whose_result_is_used_is_kept_and_named_with_its_value() -> None:
    def halve(v):
        return np.asarray(v) / 2

    @jax.jit
    def uses(x):
        jax.debug.print("x {}", x)  # dropped: a log beside it
        return jax.pure_callback(halve, jax.ShapeDtypeStruct(x.shape, x.dtype), x) + 1

    traced = jax.make_jaxpr(uses)(X)
    assert read_callbacks(traced) == [f"jax.pure_callback halve, giving float32[{X.size}]"]
    pruned = without_unread_callbacks(traced)
    assert holds_callback(pruned)
    assert "debug" not in str(pruned)


def test_what_only_a_dropped_callback_read_goes_with_it() -> None:
    @jax.jit
    def logs_a_norm(x):
        jax.debug.callback(lambda n: LOG.append(float(n)), jnp.sqrt(jnp.sum(x * x)))
        return x + 1

    pruned = without_unread_callbacks(jax.make_jaxpr(logs_a_norm)(X))
    assert [e.primitive.name for e in pruned.jaxpr.eqns[0].params["jaxpr"].jaxpr.eqns] == ["add"]


def test_logs_in_a_cond_branch_a_scan_body_and_an_ordered_print_leave_no_effect_behind() -> None:
    @jax.jit
    def f(x):
        jax.debug.print("x {}", x, ordered=True)  # an ordered effect would thread tokens through the program
        y = jax.lax.cond(x.sum() > 0, lambda v: (jax.debug.print("positive {}", v), v * 2)[1], lambda v: v, x)

        def body(carry, v):
            jax.debug.callback(lambda c: LOG.append(float(c)), carry)
            return carry + v, carry
        return jax.lax.scan(body, 0.0, y)

    pruned = without_unread_callbacks(jax.make_jaxpr(f)(X))
    assert not holds_callback(pruned) and not pruned.effects
    assert not [e for e in pruned.jaxpr.eqns[0].params["jaxpr"].jaxpr.eqns if e.effects]
    _exported(pruned)
    for got, want in zip(jaxpr_as_fun(pruned)(X), jax.tree.leaves(f(X))):
        np.testing.assert_array_equal(got, want)
