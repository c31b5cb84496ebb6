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
                    >>> import numpy as np, jax.numpy as jnp
                    >>> def _matches_numpy(values):
                    ...     x = np.asarray(values, dtype=np.float32)
                    ...     got = float(replicated_sharding_value(jnp.asarray(x)))
                    ...     return bool(np.isclose(got, np.sum(x, dtype=np.float64), rtol=1e-4, atol=1e-4))
                    >>> _matches_numpy([2.0, -1.0, 4.0]), _matches_numpy([-1.5, -2.5, -3.0])
                    (True, True)
                    """,
                },
                {
                    "hidden": False,
                    "code": r"""
                    >>> import numpy as np, jax.numpy as jnp
                    >>> def _matches_numpy(values):
                    ...     x = np.asarray(values, dtype=np.float32)
                    ...     got = float(replicated_sharding_value(jnp.asarray(x)))
                    ...     return bool(np.isclose(got, np.sum(x, dtype=np.float64), rtol=1e-4, atol=1e-4))
                    >>> _matches_numpy([]), _matches_numpy([7.25])
                    (True, True)
                    """,
                },
                {
                    "hidden": True,
                    "code": r"""
                    >>> import numpy as np, jax.numpy as jnp
                    >>> def _matches_numpy(values):
                    ...     x = np.asarray(values, dtype=np.float32)
                    ...     got = float(replicated_sharding_value(jnp.asarray(x)))
                    ...     return bool(np.isclose(got, np.sum(x, dtype=np.float64), rtol=1e-4, atol=1e-4))
                    >>> [_matches_numpy(np.random.default_rng(seed).normal(size=n)) for seed, n in [(1, 17), (2, 1000)]]
                    [True, True]
                    """,
                },
            ],
        }
    ],
}
