# expect: structure
"""Pads the batch to a fixed 40 rows and scores them one by one in a Python loop, then keeps
the first b: the program never grows with the batch (its size is the padding's), and its dot
products read xs, but nothing is batched."""
import jax.numpy as jnp

PADDED = 40


def scores(xs, w):
    padded = jnp.concatenate([xs, jnp.zeros((PADDED - xs.shape[0], xs.shape[1]), xs.dtype)])
    rows = [jnp.dot(padded[i], w) for i in range(PADDED)]
    return jnp.stack(rows)[: xs.shape[0]]
