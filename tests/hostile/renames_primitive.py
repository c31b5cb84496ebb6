"""Places x correctly, then, at import, renames JAX's sum primitive as a collective: every
program that sums would read as one that runs ``psum``, a forgery of what a structure check
reads from a program's equations. The grader watches a primitive's own attributes as data,
names the change and puts the name back."""
import jax
import jax.numpy as jnp
import numpy as np
from jax._src.lax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

lax.reduce_sum_p.name = "psum"


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
