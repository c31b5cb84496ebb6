"""Gradient accumulation: a scan over microbatches.

Write accumulated_grad(w, xs, ys), where w is a float32 JAX array of shape (d, m), xs of shape
(k, b, d) and ys of shape (k, b, m): k microbatches of b rows (k, b >= 1). The loss of one
microbatch (x, y) is jnp.mean((x @ w - y) ** 2).

1. jit the function as a whole;
2. loop over the microbatches with jax.lax.scan over (xs, ys), carrying the running sum of the
   gradients with respect to w, started from jnp.zeros_like(w);
3. return the sum divided by k: the gradient of the loss averaged over all microbatches, (d, m).

The grader checks the values against the full batch's gradient, a loop of k steps (k from the
input, not a number), a program that does not grow with k, XLA's temporary memory (one
microbatch's residuals at a time, not all of them), and no work on the host.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp


def loss(w: jax.Array, x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean((x @ w - y) ** 2)


def accumulated_grad(w: jax.Array, xs: jax.Array, ys: jax.Array) -> jax.Array:
    # Your code here: a jitted jax.lax.scan over (xs, ys) whose carry sums jax.grad(loss)(w, x, y).
    raise NotImplementedError("accumulated_grad is not written yet")
