# expect: structure
"""jnp.roll under jax.jit with x placed by rows over 'stage' and the result kept so: XLA compiles a
collective-permute by itself and every device ends up with the right row, but the code has no
shard_map and no ppermute: nothing in it says stages hand rows on."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

ROWS = NamedSharding(Mesh(np.array(jax.devices()), ("stage",)), PartitionSpec("stage"))
ROLL = jax.jit(lambda x: jnp.roll(x, 1, axis=0), in_shardings=ROWS, out_shardings=ROWS)


def pipeline_shift(x):
    return ROLL(x)
