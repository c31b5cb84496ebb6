"""The casts in a helper, the product in a jitted function of the bfloat16 operands; prints
the dtypes it multiplies."""
import jax
import jax.numpy as jnp


def to_compute_dtype(*arrays):
    return tuple(a.astype(jnp.bfloat16) for a in arrays)


@jax.jit
def _product(xb, wb):
    return jnp.matmul(xb, wb, preferred_element_type=jnp.float32)


def mixed_precision_matmul(x, w):
    xb, wb = to_compute_dtype(x, w)
    print("multiplying", xb.dtype, "by", wb.dtype)
    return _product(xb, wb).block_until_ready()
