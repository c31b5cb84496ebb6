"""jax.set_mesh over a mesh of jax.devices()[:1] and a bare jax.P(): the placement's mesh comes
from the context."""
import jax
import jax.numpy as jnp

one_device = jax.make_mesh((1,), ("data",), devices=jax.devices()[:1])


def replicated_sharding_value(x):
    with jax.set_mesh(one_device):
        placed = jax.device_put(x, jax.P())
        return jnp.sum(placed)
