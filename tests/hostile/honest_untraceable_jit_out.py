"""Control for untraceable_rehome.py: a correct, untraceable solution (it prints the placement)
that sums the *placed* array under jax.jit with out_shardings on the same sharding. Must keep
full marks."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    wanted = NamedSharding(Mesh(np.array(jax.devices()[:1]), ("data",)), PartitionSpec())
    placed = jax.device_put(x, wanted)
    print("placed on", placed.sharding)
    return jax.jit(lambda v: jnp.sum(v, dtype=jnp.float32), out_shardings=wanted)(placed)
