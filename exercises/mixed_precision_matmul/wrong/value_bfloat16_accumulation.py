# expect: value
"""Both operands cast, but no preferred_element_type: the product (and its sums) is bfloat16,
cast to float32 afterwards."""
import jax.numpy as jnp


def mixed_precision_matmul(x, w):
    return (x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)).astype(jnp.float32)
