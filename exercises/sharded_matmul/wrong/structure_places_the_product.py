# expect: structure
"""Places w, multiplies the unplaced x, then places the product by rows: the right numbers and
the right layout of the result, but x is never split (the mistake a value-only grader misses)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec



def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    everywhere = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    product = x @ everywhere
    return jax.device_put(product, NamedSharding(mesh, PartitionSpec("data", None)))
