"""Mixed precision: bfloat16 operands, float32 accumulation.

Write mixed_precision_matmul(x, w), where x is a float32 JAX array of shape (n, k) and w one of
shape (k, m) (any of n, k, m may be 0):

1. cast both operands to bfloat16 (x.astype(jnp.bfloat16), w.astype(jnp.bfloat16));
2. multiply the bfloat16 operands with preferred_element_type=jnp.float32, so the products are
   summed in float32 (jnp.matmul, jnp.dot, jnp.einsum and jax.lax.dot_general all take it);
3. return the float32 product of shape (n, m) as it is.

The grader checks the values against the exact product of the bfloat16-rounded operands, and
reads the program: both operands reach the product as bfloat16, the product accumulates in
float32, the result is not cast afterwards, and no rounding is emulated with reduce_precision.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp


def mixed_precision_matmul(x: jax.Array, w: jax.Array) -> jax.Array:
    # Your code here: cast x and w to bfloat16, multiply with preferred_element_type=jnp.float32.
    raise NotImplementedError("mixed_precision_matmul is not written yet")
