OK_FORMAT = True

test = {
    "name": "q3_sharding",
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
                    >>> from jax.sharding import NamedSharding
                    >>> isinstance(_call([1.0, 2.0, 3.0]).sharding, NamedSharding)
                    True
                    """,
                },
                {
                    "hidden": False,
                    "code": r"""
                    >>> import contextlib, io, jax, numpy as np, jax.numpy as jnp
                    >>> def _call(values):  # the student's prints (debugging, timing) are not the test's output
                    ...     with contextlib.redirect_stdout(io.StringIO()):
                    ...         return replicated_sharding_value(jnp.asarray(values, dtype=jnp.float32))
                    >>> mesh = _call([1.0, 2.0, 3.0]).sharding.mesh
                    >>> mesh.axis_names, mesh.devices.tolist() == jax.devices()[:1]
                    (('data',), True)
                    """,
                },
                {
                    "hidden": False,
                    "code": r"""
                    >>> import contextlib, io, jax, numpy as np, jax.numpy as jnp
                    >>> def _call(values):  # the student's prints (debugging, timing) are not the test's output
                    ...     with contextlib.redirect_stdout(io.StringIO()):
                    ...         return replicated_sharding_value(jnp.asarray(values, dtype=jnp.float32))
                    >>> sharding = _call([1.0, 2.0, 3.0]).sharding
                    >>> sharding.is_fully_replicated, sharding.device_set == {jax.devices()[0]}
                    (True, True)
                    """,
                },
            ],
        }
    ],
}
