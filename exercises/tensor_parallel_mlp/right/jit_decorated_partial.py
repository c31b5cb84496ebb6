"""shard_map as a decorator (functools.partial) under @jax.jit, specs aliased as P, the products
written with jnp.einsum and jnp.dot."""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("model",))


@jax.jit
@partial(jax.shard_map, mesh=MESH, in_specs=(P(), P(None, "model"), P("model")), out_specs=P())
def tensor_parallel_mlp(x, w1, w2):
    hidden = jax.nn.relu(jnp.einsum("nd,dh->nh", x, w1))
    return jax.lax.psum(jnp.dot(hidden, w2), "model")
