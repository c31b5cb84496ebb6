# expect: structure
"""Jits only the update and computes the loss it returns eagerly beside it, with no matrix
product: (x * w).sum(-1) is x @ w written elementwise, so no dot_general runs outside the jitted
step, but the whole loss is still dispatched operation by operation on every call."""
import jax
import jax.numpy as jnp


def make_step():
    @jax.jit
    def update(w, x, y, lr):
        residual = x @ w - y
        return w - lr * (2.0 / y.shape[0]) * (x.T @ residual)

    def step(w, x, y, lr):
        loss = jnp.mean(((x * w).sum(-1) - y) ** 2)
        return update(w, x, y, lr), loss

    return step
