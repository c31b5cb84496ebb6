"""h = a * h + x over xs, as one jax.lax.scan."""
import jax
import jax.numpy as jnp


def decayed_sum(xs: jax.Array, a: float) -> jax.Array:
    def step(h, x):
        return a * h + x, None

    final, _ = jax.lax.scan(step, jnp.float32(0), xs)
    return final
