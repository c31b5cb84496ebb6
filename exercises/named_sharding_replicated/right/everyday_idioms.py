"""The reference with everyday idioms around it: warnings silenced while it places and sums,
logging configured, a print redirected, jax.config.update. None changes what it computes."""
import contextlib
import io
import logging
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

logging.basicConfig(level=logging.WARNING)
jax.config.update("jax_log_compiles", False)


def replicated_sharding_value(x: jax.Array) -> jax.Array:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.filterwarnings("ignore", category=UserWarning)
        mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
        placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
        print(placed.sharding)
        logging.getLogger(__name__).debug("placed %s", placed.shape)
        return jnp.sum(placed, dtype=jnp.float32)
