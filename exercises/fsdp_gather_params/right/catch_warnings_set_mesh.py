"""jax.set_mesh with bare PartitionSpecs, the step run with warnings silenced (catch_warnings
assigns warnings.filters and puts it back) and logging configured at import."""
import logging
import warnings

import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

logging.basicConfig(level=logging.INFO)
MESH = Mesh(np.array(jax.devices()), ("data",))


@jax.jit
def _forward(w_stored, x):
    return jax.nn.relu(x @ jax.lax.with_sharding_constraint(w_stored, P()))


def fsdp_forward(w, x):
    with warnings.catch_warnings(), jax.set_mesh(MESH):
        warnings.simplefilter("ignore")
        w_stored = jax.device_put(w, P("data", None))
        logging.getLogger(__name__).info("stored %s", w_stored.sharding.spec)
        return w_stored, _forward(w_stored, x)
