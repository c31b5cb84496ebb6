"""Places x correctly, then, at import, renames JAX's sum primitive as a collective: every
program that sums would read as one that runs ``psum``, a forgery of what a structure check
reads from a program's equations as the child traces them. The compiled collectives are the
witness's; on this exercise, which counts none, the right answer keeps full marks (a written
count is the child's word: docs/threat-model.md, "The witness")."""
import jax
import jax.numpy as jnp
import numpy as np
from jax._src.lax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

lax.reduce_sum_p.name = "psum"


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
