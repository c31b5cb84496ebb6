"""Control for the patching files: a correct solution that configures what a student may
configure, through public APIs: JAX's configuration, NumPy's print options, warning filters,
logging, a JAX module imported lazily. Must keep full marks: none of it replaces a function."""
import logging
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

jax.config.update("jax_enable_x64", False)
jax.config.update("jax_numpy_rank_promotion", "allow")
np.set_printoptions(precision=4)
warnings.filterwarnings("ignore", category=DeprecationWarning)
logging.basicConfig(level=logging.WARNING)
log = logging.getLogger("solution")


def replicated_sharding_value(x):
    from jax.experimental import mesh_utils  # imported lazily, as a helper might
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    log.debug("placed %s", placed.shape)
    assert mesh_utils is not None
    return jnp.sum(placed, dtype=jnp.float32)
