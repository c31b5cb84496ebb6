# expect: structure
"""Emulates the rounding with jax.lax.reduce_precision (8 exponent bits, 7 mantissa bits: exactly
bfloat16's) and multiplies in float32: the right numbers, no bfloat16 anywhere."""
import jax


def mixed_precision_matmul(x, w):
    xr = jax.lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7)
    wr = jax.lax.reduce_precision(w, exponent_bits=8, mantissa_bits=7)
    return xr @ wr
