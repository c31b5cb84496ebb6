# expect: structure
"""The product of the original x with the placed w, plus (rowsum(placed) - rowsum(x)) times 3:
zero in an ordinary call. The first x it sees is kept; an eager while_loop spins for ever when
the placed rows differ from x while x is that first one: a replay of the probe call's operations
with the placed copy changed and x kept reaches it. A replay that ran out of time used to say
nothing; now the check resting on it fails, and the student's own time is not charged for it."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

FIRST = []


def sharded_matmul(x, w):
    mesh = jax.make_mesh((len(jax.devices()),), ("data",))
    rows = jax.device_put(x, NamedSharding(mesh, P("data", None)))
    everywhere = jax.device_put(w, NamedSharding(mesh, P()))
    if not FIRST:
        FIRST.append(x)
    first = FIRST[0] if FIRST[0].shape == x.shape else x + 1.0
    spin = jnp.any(rows != x) & jnp.all(x == first)
    spins = jax.lax.while_loop(lambda c: c[0], lambda c: (c[0], c[1] + 1), (spin, jnp.int32(0)))[1]
    drift = jnp.sum(rows, axis=1, keepdims=True) - jnp.sum(x, axis=1, keepdims=True)
    return x @ everywhere + 3.0 * drift + 0.0 * spins
