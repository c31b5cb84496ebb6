# expect: structure
"""Casts each operand to bfloat16 and straight back to float32, then multiplies in float32 under
jax.jit: the operands are rounded, the product is not a bfloat16 product."""
import jax
import jax.numpy as jnp


@jax.jit
def mixed_precision_matmul(x, w):
    xr = x.astype(jnp.bfloat16).astype(jnp.float32)
    wr = w.astype(jnp.bfloat16).astype(jnp.float32)
    return jnp.matmul(xr, wr, preferred_element_type=jnp.float32)
