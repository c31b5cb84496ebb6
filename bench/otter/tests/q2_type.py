OK_FORMAT = True

test = {
    "name": "q2_type",
    "points": 1,
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
                    >>> import jax, jax.numpy as jnp
                    >>> out = replicated_sharding_value(jnp.array([1.0, 2.0, 3.0], dtype=jnp.float32))
                    >>> isinstance(out, jax.Array), out.dtype == jnp.float32, out.shape
                    (True, True, ())
                    """,
                },
            ],
        }
    ],
}
