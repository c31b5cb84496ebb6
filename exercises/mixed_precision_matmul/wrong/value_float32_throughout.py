# expect: value
"""No cast at all: a float32 product with float32 accumulation."""
import jax.numpy as jnp


def mixed_precision_matmul(x, w):
    return jnp.matmul(x, w, preferred_element_type=jnp.float32)
