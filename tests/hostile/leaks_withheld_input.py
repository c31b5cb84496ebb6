"""Places and sums correctly on finite inputs; on a non-finite one (which only a withheld check
gives it) raises RecursionError with that input in its text, and keeps the text to raise again
in every later call. No text a student is shown may carry the withheld input."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

KEPT = []


def replicated_sharding_value(x):
    if KEPT:
        raise ValueError(f"LEAKED {KEPT[0]}")
    values = np.asarray(x)
    if values.size and not np.isfinite(values).all():
        KEPT.append(repr(values.tolist()))
        raise RecursionError(f"LEAKED {KEPT[0]}")
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
