# expect: structure
"""Wrong: the rows travel nine times round a while loop whose trip count comes from the data
(nine shifts by one stage are one shift of eight stages), so every device receives nine rows;
the program holds one ppermute, the loop runs it nine times."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

STAGES = 8
MESH = Mesh(np.array(jax.devices()), ("stage",))
FORWARD = [(i, (i + 1) % STAGES) for i in range(STAGES)]


def _hand_on(block: jax.Array) -> jax.Array:
    trips = STAGES + 1 + (jnp.sum(block) * 0).astype(jnp.int32)
    return jax.lax.fori_loop(0, trips, lambda i, b: jax.lax.ppermute(b, "stage", perm=FORWARD), block)


SHIFT = jax.jit(jax.shard_map(_hand_on, mesh=MESH, in_specs=PartitionSpec("stage"), out_specs=PartitionSpec("stage")))


def pipeline_shift(x: jax.Array) -> jax.Array:
    return SHIFT(x)
