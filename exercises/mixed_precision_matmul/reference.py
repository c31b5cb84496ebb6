"""Reference solution for mixed_precision_matmul: both operands rounded to bfloat16, multiplied
with float32 accumulation."""
import jax
import jax.numpy as jnp


def mixed_precision_matmul(x: jax.Array, w: jax.Array) -> jax.Array:
    xb = x.astype(jnp.bfloat16)
    wb = w.astype(jnp.bfloat16)
    return jnp.matmul(xb, wb, preferred_element_type=jnp.float32)
