"""Steps that change nothing: xb * 1, a second cast to bfloat16 of a bfloat16 array, and the
float32 product cast to float32 again. None of them rounds anything."""
import jax
import jax.numpy as jnp


def mixed_precision_matmul(x, w):
    xb = x.astype(jnp.bfloat16)
    xb = xb * 1
    wb = w.astype(jnp.bfloat16).astype(jnp.bfloat16)
    out = jnp.dot(xb, wb, preferred_element_type=jnp.float32)
    return out.astype(jnp.float32)
