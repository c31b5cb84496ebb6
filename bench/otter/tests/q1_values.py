OK_FORMAT = True

test = {
    "name": "q1_values",
    "points": 3,
    "suites": [
        {
            "type": "doctest",
            "scored": True,
            "setup": "",
            "teardown": "",
            "cases": [
                {
                    "hidden": False,
                    "code": r"""
                    >>> import contextlib, io, jax, numpy as np, jax.numpy as jnp
                    >>> def _call(values):  # the student's prints (debugging, timing) are not the test's output
                    ...     with contextlib.redirect_stdout(io.StringIO()):
                    ...         return replicated_sharding_value(jnp.asarray(values, dtype=jnp.float32))
                    >>> def _matches_numpy(values):
                    ...     x = np.asarray(values, dtype=np.float32)
                    ...     return bool(np.isclose(float(_call(x)), np.sum(x, dtype=np.float64), rtol=1e-4, atol=1e-4))
                    >>> _matches_numpy([2.0, -1.0, 4.0]), _matches_numpy([-1.5, -2.5, -3.0])
                    (True, True)
                    """,
                },
                {
                    "hidden": False,
                    "code": r"""
                    >>> import contextlib, io, jax, numpy as np, jax.numpy as jnp
                    >>> def _call(values):  # the student's prints (debugging, timing) are not the test's output
                    ...     with contextlib.redirect_stdout(io.StringIO()):
                    ...         return replicated_sharding_value(jnp.asarray(values, dtype=jnp.float32))
                    >>> def _matches_numpy(values):
                    ...     x = np.asarray(values, dtype=np.float32)
                    ...     return bool(np.isclose(float(_call(x)), np.sum(x, dtype=np.float64), rtol=1e-4, atol=1e-4))
                    >>> _matches_numpy([]), _matches_numpy([7.25])
                    (True, True)
                    """,
                },
                {
                    "hidden": True,
                    "code": r"""
                    >>> import contextlib, io, jax, numpy as np, jax.numpy as jnp
                    >>> def _call(values):  # the student's prints (debugging, timing) are not the test's output
                    ...     with contextlib.redirect_stdout(io.StringIO()):
                    ...         return replicated_sharding_value(jnp.asarray(values, dtype=jnp.float32))
                    >>> def _matches_numpy(values):
                    ...     x = np.asarray(values, dtype=np.float32)
                    ...     return bool(np.isclose(float(_call(x)), np.sum(x, dtype=np.float64), rtol=1e-4, atol=1e-4))
                    >>> [_matches_numpy(np.random.default_rng(seed).normal(size=n)) for seed, n in [(1, 17), (2, 1000)]]
                    [True, True]
                    """,
                },
            ],
        }
    ],
}
