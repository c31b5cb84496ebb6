"""jax.jit-decorated, with jax.lax.dot_general and its dimension numbers written out."""
import jax
import jax.numpy as jnp


@jax.jit
def mixed_precision_matmul(x: jax.Array, w: jax.Array) -> jax.Array:
    xb = jax.lax.convert_element_type(x, jnp.bfloat16)
    wb = jax.lax.convert_element_type(w, jnp.bfloat16)
    return jax.lax.dot_general(xb, wb, dimension_numbers=(((1,), (0,)), ((), ())),
                               preferred_element_type=jnp.float32)
