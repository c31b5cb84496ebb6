# expect: value
"""float16 instead of bfloat16: 11 significant bits (the operands are not rounded as bfloat16
rounds them) and a largest value of 65504."""
import jax.numpy as jnp


def mixed_precision_matmul(x, w):
    return jnp.matmul(x.astype(jnp.float16), w.astype(jnp.float16), preferred_element_type=jnp.float32)
