# expect: structure
"""Places both and prints the placements (untraceable), but multiplies the original x and w and
puts the product on the row sharding afterwards: right numbers and result layout, the placed
arrays never used."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def sharded_matmul(x, w):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = NamedSharding(mesh, PartitionSpec("data", None))
    xs = jax.device_put(x, rows)
    ws = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    print(xs.sharding, ws.sharding)
    return jax.device_put(x @ w, rows)
