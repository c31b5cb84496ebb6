"""Times the jitted sum the way one benchmarks: the same jitted function called three times on
the same input (the later calls are served from JAX's dispatch cache), the last result returned."""
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
SUM_COLUMNS = jax.jit(lambda m: jnp.sum(m, axis=0), in_shardings=NamedSharding(MESH, PartitionSpec("data", None)),
                      out_shardings=NamedSharding(MESH, PartitionSpec()))


def column_sums(x):
    for _ in range(3):
        start = time.perf_counter()
        sums = SUM_COLUMNS(x).block_until_ready()
        elapsed = time.perf_counter() - start
    print(f"last call: {elapsed * 1e3:.2f} ms")
    return sums
