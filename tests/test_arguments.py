"""grader.arguments: declared signatures, argument trees and the Python that rebuilds them."""
from __future__ import annotations

import ast

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.tree_util import keystr, tree_flatten_with_path

from grader.arguments import (Array, Key, KeySeed, Scalar, Signature, argument_leaves, encode, is_within, literal,
                              short)
from grader.errors import ExerciseError

SGD = Signature({"params": {"dense": {"kernel": Array("float32", "k m"), "bias": Array("float32", "m")}},
                 "grads": {"dense": {"kernel": Array("float32", "k m"), "bias": Array("float32", "m")}},
                 "lr": Scalar("float")},
                returns={"dense": {"kernel": Array("float32", "k m"), "bias": Array("float32", "m")}})


def _params(k: int, m: int) -> dict:
    return {"dense": {"kernel": np.ones((k, m), np.float32), "bias": np.zeros(m, np.float32)}}


def test_the_signature_reads_as_the_statement_writes_it():
    assert SGD.text("sgd_step") == "sgd_step(params: dict, grads: dict, lr: float) -> dict"
    assert SGD.call_text("sgd_step") == "sgd_step(params, grads, lr)"
    matmul = Signature({"x": Array("float32", "n k"), "w": Array("float32", "k m")}, returns=Array("float32", "n m"))
    assert matmul.text("sharded_matmul") == "sharded_matmul(x: jax.Array, w: jax.Array) -> jax.Array"


def test_leaf_paths_are_the_ones_jax_prints():
    arguments = {"params": _params(2, 3), "grads": _params(2, 3), "lr": 0.1}
    ours = [path for path, _ in argument_leaves(arguments)]
    theirs = [name + keystr(p) for name, value in arguments.items()
              for p, _ in tree_flatten_with_path(jax.tree.map(jnp.asarray, value))[0]]
    assert ours == theirs
    assert list(SGD.leaf_specs()) == ours
    assert is_within("params['dense']['bias']", "params") and not is_within("paramsx", "params")


def test_dimensions_bind_across_parameters_and_disagreements_are_named():
    assert SGD.dims_of({"params": _params(2, 3), "grads": _params(2, 3), "lr": 0.1}) == {"k": 2, "m": 3}
    problem = SGD.problem({"params": _params(2, 3), "grads": _params(2, 4), "lr": 0.1})
    assert problem and "grads['dense']" in problem and "m = " in problem
    assert "must be a Python float" in SGD.problem({"params": _params(2, 3), "grads": _params(2, 3), "lr": "a"})
    assert "dtype float64" in Signature({"x": Array("float32", "n")}).problem({"x": np.zeros(2)})
    assert "must be a dict" in Signature({"x": Array("float32", "n")}).problem(np.zeros(2, np.float32))


def test_malformed_declarations_are_exercise_errors():
    with pytest.raises(ExerciseError, match="not a NumPy dtype"):
        Array("floaty32", "n")
    with pytest.raises(ExerciseError, match="is not Array"):
        Signature({"x": "float32[n]"})
    with pytest.raises(ExerciseError, match="identifier"):
        Signature({"not a name": Array()})


@pytest.mark.parametrize("value", [
    np.array([1.5, -0.0, np.inf, -np.inf, np.nan], np.float32),
    np.arange(300, dtype=np.float32).reshape(20, 15) / 7,  # large: written as its compressed bytes
    np.arange(6, dtype=np.int32).reshape(2, 3),
    {"w": np.float32([1, 2]), "b": (np.float32([3]), 2.5)},
    KeySeed(7),
])
def test_literals_are_valid_python_that_rebuilds_the_value_exactly(value):
    import base64  # noqa: F401 (the names a reproduce command imports)
    import zlib  # noqa: F401
    text = literal(value)
    ast.parse(text, mode="eval")
    rebuilt = eval(text)
    ours = [leaf for _, leaf in argument_leaves({"v": value})]
    theirs = [leaf for _, leaf in argument_leaves({"v": rebuilt})]
    for a, b in zip(ours, theirs):
        if isinstance(a, KeySeed):
            assert jnp.array_equal(jax.random.key_data(b), jax.random.key_data(jax.random.key(a.seed)))
        else:
            np.testing.assert_array_equal(np.asarray(b), a)
    assert len(short(value)) < 400


def test_encoding_covers_every_kind_of_argument():
    encoded = encode({"x": np.zeros(2, np.float32), "t": (1, 2.5, None), "k": KeySeed(3)})
    assert encoded["kind"] == "dict" and [k for k, _ in encoded["items"]] == ["x", "t", "k"]
    with pytest.raises(TypeError):
        encode(object())
    assert Key().text() == "key"


def test_scalars_keys_and_pytrees_reach_the_function_as_declared(tmp_path) -> None:
    """Through a real child: a Python float stays a float (static when traced), a key is a typed
    PRNG key, a dict of arrays arrives as a dict, and a dict comes back leaf by leaf."""
    from grader.observe.session import Session
    from grader.sandbox.limits import Limits

    path = tmp_path / "submission.py"
    path.write_text(
        "import jax, jax.numpy as jnp\n\n"
        "def f(x, lr, key, params):\n"
        "    assert type(lr) is float, type(lr)\n"
        "    noise = jax.random.normal(key, x.shape)\n"
        "    return {'w': params['w'] - lr * x, 'n': jnp.sum(noise * 0.0) + jax.random.key_data(key)[-1]}\n")
    arguments = {"x": np.float32([1, 2]), "lr": 0.5, "key": KeySeed(3), "params": {"w": np.float32([4, 4])}}
    session = Session(path, "f", tuple(arguments), 2, Limits(call_s=30, total_s=120))
    try:
        assert session.load().ok, session.load().detail
        returned = session.call(arguments)
        assert returned.ok, returned.describe()
        leaves = {leaf.path: leaf.array for leaf in returned.leaves}
        np.testing.assert_array_equal(leaves["result['w']"], np.float32([3.5, 3.0]))
        assert leaves["result['n']"] == jax.random.key_data(jax.random.key(3))[-1]
        traced = session.trace(arguments)
        assert traced.program is not None, traced.error
        assert "lr" not in traced.program.input_paths  # static: a Python number when traced too
        assert {"x", "key", "params['w']"} <= set(traced.program.input_paths)
    finally:
        session.close()
