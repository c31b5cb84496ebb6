# expect: structure
"""The layer computed in NumPy on the host and the answer placed on every device of a 'model'
mesh: the right numbers, no shard_map, no psum."""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def tensor_parallel_mlp(x, w1, w2):
    out = np.maximum(np.asarray(x) @ np.asarray(w1), 0) @ np.asarray(w2)
    mesh = Mesh(np.array(jax.devices()), ("model",))
    return jax.device_put(out.astype(np.float32), NamedSharding(mesh, P()))
