"""Places x correctly, but while its call runs wraps the compiled executable's HLO modules (a
method of jaxlib's C++ class, so that a program would show no collective while the call is
recorded) and puts the original back before returning. The witness compiles the programs
itself: the patch forges nothing, and the right answer keeps full marks."""
import jax
import jax.numpy as jnp
import numpy as np
from jaxlib import _jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

original = _jax.LoadedExecutable.hlo_modules


def replicated_sharding_value(x):
    _jax.LoadedExecutable.hlo_modules = lambda self: original(self)[:0]
    try:
        mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
        return jax.jit(jnp.sum)(jax.device_put(x, NamedSharding(mesh, PartitionSpec())))
    finally:
        _jax.LoadedExecutable.hlo_modules = original
