"""grader/witness/rerun.py on real calls: the witness loads JAX's CPU LAPACK kernels only for a
program that calls one, and still reproduces both kinds of program; a forked or exec'd witness
alike (``load_lapack_on_demand`` runs in the witness alone, never in a child beside it)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.observe.session import Session
from grader.sandbox.limits import Limits
from grader.sandbox.pool import Pool
from grader.witness import close_all

SOLUTION = '''
import jax
import jax.numpy as jnp


@jax.jit
def plain(x):
    return jnp.sum(x @ x.T)


@jax.jit
def factor(x):
    a = x @ x.T + 4.0 * jnp.eye(x.shape[0], dtype=x.dtype)
    return jnp.linalg.cholesky(a)


@jax.jit
def exported_by_the_submission(x):
    # a submission that lowers an exported program of its own (with LAPACK) in the child
    exported = jax.export.export(jax.jit(lambda y: jnp.linalg.cholesky(y @ y.T + 4.0 * jnp.eye(y.shape[0]))))(x)
    return exported.call(x)
'''
PROBE = {"x": (np.arange(16, dtype=np.float32).reshape(4, 4) / 16.0)}


@pytest.mark.slow
@pytest.mark.parametrize("forked", [False, True])
def test_programs_with_and_without_lapack_kernels_are_reproduced(tmp_path: Path, forked: bool) -> None:
    path = tmp_path / "solution.py"
    path.write_text(SOLUTION)
    close_all()
    with Pool() as pool:
        for function in ("plain", "factor", "exported_by_the_submission", "plain"):
            session = Session(path, function, ("x",), 1, Limits(call_s=60, total_s=180),
                              launcher=pool.launch if forked else None)
            try:
                assert session.load().ok, session.load().detail
                returned = session.call(PROBE, record="full")
                assert returned.ok, returned.error
                assert session.witnessed is not None and session.witnessed.status == "reproduced", (
                    function, session.witnessed)
            finally:
                session.close()
    close_all()


EAGER = '''
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P

MESH = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))


def vmapped(x):
    return jax.vmap(lambda row: jnp.dot(row, row), in_axes=0)(x)


def shard_map_under_set_mesh(x):
    with jax.set_mesh(MESH):
        return jax.shard_map(lambda block: jax.lax.psum(block.sum(0), "data"), in_specs=P("data"), out_specs=P())(x)


def eager_grad(x):
    return jax.grad(lambda y: jnp.sum(jnp.tanh(y) ** 2))(x)
'''


@pytest.mark.slow
@pytest.mark.parametrize("function", ["vmapped", "shard_map_under_set_mesh", "eager_grad"])
def test_eager_transformations_hand_over_an_account_the_witness_reproduces(tmp_path: Path, function: str) -> None:
    """Run eagerly, without jax.jit: a vmap (its operations on one example's tracers are not the
    arrays'), a shard_map without mesh= under jax.set_mesh (exported with that mesh set again),
    a grad (its forward pass on the JVP's primals)."""
    path = tmp_path / "solution.py"
    path.write_text(EAGER)
    session = Session(path, function, ("x",), 8, Limits(call_s=60, total_s=180))
    try:
        assert session.load().ok, session.load().detail
        returned = session.call({"x": np.arange(64, dtype=np.float32).reshape(8, 8) / 64.0}, record="full")
        assert returned.ok, returned.error
        assert session.witnessed is not None and session.witnessed.status == "reproduced", session.witnessed
    finally:
        session.close()
