"""The reference wrapped in the standard library's and JAX's everyday idioms: warnings silenced
around a noisy import and inside the call (warnings.catch_warnings assigns warnings.filters and
puts it back), logging configured, prints redirected, NumPy print options, jax.config.update, a
jax.experimental import and an lru_cache'd helper. None of them changes what the function does."""
import contextlib
import functools
import io
import logging
import warnings

import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from jax.experimental import multihost_utils  # noqa: F401 (imported as a course's utilities are)

warnings.filterwarnings("ignore", category=DeprecationWarning)
logging.basicConfig(level=logging.INFO)
log = logging.getLogger(__name__)
jax.config.update("jax_log_compiles", False)


def _block(x: jax.Array, w1_block: jax.Array, w2_block: jax.Array) -> jax.Array:
    return jax.lax.psum(jax.nn.relu(x @ w1_block) @ w2_block, "model")


@functools.lru_cache(maxsize=None)
def _layer(devices: int):
    mesh = Mesh(np.array(jax.devices()[:devices]), ("model",))
    return jax.jit(jax.shard_map(_block, mesh=mesh, in_specs=(PartitionSpec(), PartitionSpec(None, "model"),
                                                              PartitionSpec("model", None)),
                                 out_specs=PartitionSpec()))


def tensor_parallel_mlp(x: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    log.info("layer on %d devices", len(jax.devices()))
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), np.printoptions(precision=3):
        warnings.simplefilter("ignore")
        print("inputs", np.asarray(x)[:1])
        return _layer(len(jax.devices()))(x, w1, w2)
