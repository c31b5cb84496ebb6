# expect: value
"""Does everything right, then casts the float32 product to bfloat16 "to save memory" and back:
the accumulation's extra bits are thrown away."""
import jax.numpy as jnp


def mixed_precision_matmul(x, w):
    out = jnp.matmul(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16), preferred_element_type=jnp.float32)
    return out.astype(jnp.bfloat16).astype(jnp.float32)
