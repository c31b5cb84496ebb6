"""The gradient written out by hand, lr given to the program as a float32 array."""
import jax
import jax.numpy as jnp


def make_step():
    @jax.jit
    def step(w, x, y, lr):
        residual = x @ w - y
        grad = 2.0 * (x.T @ residual) / y.shape[0]
        return w - lr * grad, jnp.mean(residual * residual)

    def call(w, x, y, lr):
        return step(w, x, y, jnp.float32(lr))

    return call
