"""The scan under jax.jit, with a traced as an argument of the jitted function."""
import jax
import jax.numpy as jnp


@jax.jit
def decayed_sum(xs, a):
    final, _ = jax.lax.scan(lambda h, x: (a * h + x, None), jnp.zeros((), jnp.float32), xs)
    return final
