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
                    >>> import jax.numpy as jnp
                    >>> from jax.sharding import NamedSharding
                    >>> out = replicated_sharding_value(jnp.array([1.0, 2.0, 3.0], dtype=jnp.float32))
                    >>> isinstance(out.sharding, NamedSharding)
                    True
                    """,
                },
                {
                    "hidden": False,
                    "code": r"""
                    >>> import jax, jax.numpy as jnp
                    >>> mesh = replicated_sharding_value(jnp.array([1.0, 2.0, 3.0], dtype=jnp.float32)).sharding.mesh
                    >>> mesh.axis_names, mesh.devices.tolist() == jax.devices()[:1]
                    (('data',), True)
                    """,
                },
                {
                    "hidden": False,
                    "code": r"""
                    >>> import jax, jax.numpy as jnp
                    >>> sharding = replicated_sharding_value(jnp.array([1.0, 2.0, 3.0], dtype=jnp.float32)).sharding
                    >>> sharding.is_fully_replicated, sharding.device_set == {jax.devices()[0]}
                    (True, True)
                    """,
                },
            ],
        }
    ],
}
