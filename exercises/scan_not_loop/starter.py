"""A recurrence with jax.lax.scan, not a Python loop.

Write decayed_sum(xs, a), where xs is a one-dimensional float32 JAX array and a is a Python
float with |a| < 1: starting from h = 0, compute h = a * h + x for each x of xs in order, and
return the last h as a float32 JAX array of shape ().

Use jax.lax.scan: a Python for loop over xs gives the same number, but its program holds one
copy of the step per element (eagerly, and unrolled under jax.jit), so it grows with the input.
The grader calls your function on a sequence twice as long and counts the operations.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp


def decayed_sum(xs: jax.Array, a: float) -> jax.Array:
    # Your code here: one jax.lax.scan over xs.
    raise NotImplementedError("decayed_sum is not written yet")
