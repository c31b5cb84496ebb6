"""A callable object holding the compute dtypes, jnp.einsum with preferred_element_type, jitted
once in the constructor."""
import jax
import jax.numpy as jnp


class MixedPrecisionMatmul:
    def __init__(self, compute_dtype=jnp.bfloat16, accumulate_dtype=jnp.float32):
        self.compute_dtype = compute_dtype
        self.accumulate_dtype = accumulate_dtype
        self._product = jax.jit(self._product_of)

    def _product_of(self, x, w):
        return jnp.einsum("nk,km->nm", jnp.asarray(x, self.compute_dtype), jnp.asarray(w, self.compute_dtype),
                          preferred_element_type=self.accumulate_dtype)

    def __call__(self, x, w):
        return self._product(x, w)


mixed_precision_matmul = MixedPrecisionMatmul()
