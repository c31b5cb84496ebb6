# expect: structure
"""The gradient computed in NumPy through a host callback, inside the jitted step."""
import jax
import jax.numpy as jnp
import numpy as np


def _host_grad(w, x, y):
    residual = np.asarray(x) @ np.asarray(w) - np.asarray(y)
    return (2.0 * np.asarray(x).T @ residual / len(y)).astype(np.float32)


def make_step():
    @jax.jit
    def step(w, x, y, lr):
        grad = jax.pure_callback(_host_grad, jax.ShapeDtypeStruct(w.shape, w.dtype), w, x, y)
        return w - lr * grad, jnp.mean((x @ w - y) ** 2)

    return step
