"""Per-example scores with jax.vmap, not a loop over examples.

Write scores(xs, w), where xs is a float32 JAX array of shape (b, k) (b examples of k
features, b possibly 0) and w a float32 array of shape (k,): return the float32 array of shape
(b,) whose entry i is the dot product of xs[i] with w. Write the score of one example and
batch it with jax.vmap: no Python loop over the examples, no jax.lax.map.
The grader calls your function on a batch twice as large and counts the operations.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp


def scores(xs: jax.Array, w: jax.Array) -> jax.Array:
    # Your code here: score one example, then jax.vmap it over xs.
    raise NotImplementedError("scores is not written yet")
