"""Sorts the elements by magnitude before summing, for accuracy: correct, but every length costs an argsort and a gather to compile."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    ordered = placed[jnp.argsort(jnp.abs(placed))]
    return jnp.sum(ordered)
