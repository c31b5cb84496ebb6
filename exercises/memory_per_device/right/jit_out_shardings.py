"""A jitted identity whose out_shardings split the rows: XLA writes each block where it belongs."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

ROWS = NamedSharding(Mesh(np.array(jax.devices()), ("d",)), P("d", None))
PLACE = jax.jit(lambda w: w, out_shardings=ROWS)


def shard_params(w):
    return PLACE(w)
