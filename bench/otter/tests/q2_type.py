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
                    >>> import contextlib, io, jax, numpy as np, jax.numpy as jnp
                    >>> def _call(values):  # the student's prints (debugging, timing) are not the test's output
                    ...     with contextlib.redirect_stdout(io.StringIO()):
                    ...         return replicated_sharding_value(jnp.asarray(values, dtype=jnp.float32))
                    >>> out = _call([1.0, 2.0, 3.0])
                    >>> isinstance(out, jax.Array), out.dtype == jnp.float32, out.shape
                    (True, True, ())
                    """,
                },
            ],
        }
    ],
}
