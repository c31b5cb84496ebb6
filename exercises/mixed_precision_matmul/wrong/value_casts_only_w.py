# expect: value
"""Casts w (the weights) to bfloat16 and keeps the activations x in float32, jitted."""
import jax
import jax.numpy as jnp


@jax.jit
def mixed_precision_matmul(x, w):
    return jnp.dot(x, w.astype(jnp.bfloat16), preferred_element_type=jnp.float32)
