"""A correct solution that, at the end of every call, replaces jnp.sum and gives jax.Array a new
attribute. Were those patches still in place at the next call, its sum would be off by one:
right values mean the grader undid them between calls (patch_jax.py patches at import). They
forge nothing the witness re-derives: full marks. It leaves the grader's own observers alone:
removing those is tested apart."""
import jax
import jax.numpy as jnp
import numpy as np
from jax._src.array import ArrayImpl
from jax.sharding import Mesh, NamedSharding, PartitionSpec

real_sum = jnp.sum


def marked_sum(*args, **kwargs):
    return real_sum(*args, **kwargs) + 1


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    result = real_sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
    if jnp.sum is marked_sum or hasattr(ArrayImpl, "left_by_the_submission"):
        result = result + 1  # a patch from the previous call survived
    jnp.sum = marked_sum
    ArrayImpl.left_by_the_submission = True
    return result
