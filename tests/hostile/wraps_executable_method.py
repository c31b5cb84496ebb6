"""A correct placement and sum, from a file that wraps a method of a JAX Python class at import:
the compiled executable's XLA handle, through which the grader reads memory statistics and HLO
text. The wrapper passes everything through, and the witness compiles the programs itself: it
forges nothing, and the right answer keeps full marks."""
import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import pxla
from jax.sharding import Mesh, NamedSharding, PartitionSpec

real_executable = pxla.MeshExecutable.xla_extension_executable
pxla.MeshExecutable.xla_extension_executable = lambda self: real_executable(self)


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
