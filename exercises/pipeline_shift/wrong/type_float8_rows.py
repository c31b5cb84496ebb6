# expect: type
"""Casts each stage's row to float8_e5m2 before the ppermute to send a quarter of the bytes, and
returns the float8 rows: one ppermute, the right layout, the wrong dtype (and rounded values)."""
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((8,), ("stage",))


@jax.jit
def _shift(x):
    return jax.shard_map(lambda b: jax.lax.ppermute(b.astype(jnp.float8_e5m2), "stage",
                                                    [(i, (i + 1) % 8) for i in range(8)]),
                         in_specs=P("stage"), out_specs=P("stage"))(x)


def pipeline_shift(x):
    with jax.set_mesh(mesh):
        return _shift(jax.device_put(x, P("stage")))
