# expect: structure
"""The gradient worked out by hand in NumPy on the host, microbatch by microbatch, then handed back
to JAX: right numbers, but no program of JAX's computes them."""
import jax.numpy as jnp
import numpy as np


def accumulated_grad(w, xs, ys):
    w, xs, ys = np.asarray(w), np.asarray(xs), np.asarray(ys)
    k, b, _ = xs.shape
    total = np.zeros_like(w)
    for x, y in zip(xs, ys):
        total += (2.0 / (b * w.shape[1])) * (x.T @ (x @ w - y))
    return jnp.asarray(total / k)
