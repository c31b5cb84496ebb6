"""grader/witness/rerun.py on real calls: the witness never runs a program that calls native code
(LAPACK here: the kernel trusts the buffer shapes the program declares), which is then
unverifiable, and reproduces the rest; a forked or exec'd witness alike, and a submission that
lowers an exported program of its own in the child still runs there."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grader.observe.session import Session
from grader.sandbox.limits import Limits
from grader.sandbox.pool import Pool

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
def test_programs_calling_lapack_kernels_are_never_run_again_and_the_rest_are_reproduced(tmp_path: Path,
                                                                                       forked: bool) -> None:
    path = tmp_path / "solution.py"
    path.write_text(SOLUTION)
    expected = {"plain": "reproduced", "factor": "unverifiable", "exported_by_the_submission": "unverifiable"}
    with Pool() as pool:
        for function, status in expected.items():
            session = Session(path, function, ("x",), 1, Limits(call_s=60, total_s=180),
                              launcher=pool.launch if forked else None)
            try:
                assert session.load().ok, session.load().detail
                returned = session.call(PROBE, record="full")
                assert returned.ok, returned.error  # the child runs it
                assert session.witnessed is not None and session.witnessed.status == status, (function,
                                                                                             session.witnessed)
                if status == "unverifiable":
                    assert "lapack_" in session.witnessed.detail and "native code" in session.witnessed.detail
                    assert returned.unverified == session.witnessed.detail
            finally:
                session.close()


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


def _account(function, *arguments) -> dict:
    """An account of one program step reading every argument, as a child would hand it over."""
    import base64

    import jax
    exported = jax.export.export(jax.jit(function))(*arguments)
    return {"steps": [{"kind": "program", "reads": [["arg", i] for i in range(len(arguments))], "program": 0}],
            "programs": [{"b64": base64.b64encode(exported.serialize()).decode("ascii")}], "constants": [],
            "outputs": [["step", 0, 0]]}


def _named(*arguments) -> list:
    from grader.arguments import encode
    return [[f"a{i}", encode(a)] for i, a in enumerate(arguments)]


def test_a_program_calling_native_code_is_never_compiled_and_is_unverifiable() -> None:
    """LAPACK's LU, the kernel a forged account fed a one-element pivot buffer for 1024 pivots:
    never run, and not called a divergence. (jax.export writes no host callback: only an account
    edited in the child holds one, and it is refused by the same list.)"""
    import jax
    import jax.numpy as jnp

    from grader.witness.rerun import rerun
    x = np.eye(4, dtype=np.float32) * 2.0
    lu = rerun(_account(lambda a: jax.scipy.linalg.lu_factor(a)[0], x), _named(x))
    assert lu["ok"] is False and "lapack_sgetrf" in lu["unverifiable"] and "native code" in lu["unverifiable"]
    honest = rerun(_account(lambda a: jnp.sum(a @ a), x), _named(x))
    assert honest["ok"] is True, honest


def test_a_program_beyond_the_witness_bounds_is_never_compiled() -> None:
    import jax

    from grader.witness.rerun import rerun
    x = np.ones((2, 2), np.float32)
    big = np.arange(3 << 20, dtype=np.float32)  # 12 MiB of constant in the program
    heavy = rerun(_account(lambda a: a + jax.numpy.sum(jax.numpy.asarray(big)), x), _named(x))
    assert heavy["ok"] is False and "serialization is over 4 MiB" in heavy["unverifiable"], heavy

    def nested(a, depth):
        return a * 2.0 if depth == 0 else jax.lax.cond(a.sum() > 0, lambda v: nested(v, depth - 1), lambda v: v, a)
    deep = rerun(_account(lambda a: nested(a, 40), x), _named(x))
    assert deep["ok"] is False and "nest more than 32" in deep["unverifiable"], deep
    assert rerun(_account(lambda a: nested(a, 4), x), _named(x))["ok"] is True


def test_the_bounds_read_a_programs_text() -> None:
    from grader.witness.rerun import bounded
    splat = "%c = stablehlo.constant dense<2.0> : tensor<8192x4096xf32>\n"  # small to write, 128 MiB to make
    assert "constants hold more than" in bounded(splat)
    assert bounded("%c = stablehlo.constant dense<2.0> : tensor<64x4xf32>\n") is None
    assert "more than 20,000 operations" in bounded("%0 = stablehlo.add %a, %a : tensor<f32>\n" * 20_001)
