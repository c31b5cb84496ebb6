# expect: structure
"""lr turned into a Python number and captured: each value is baked into a new trace."""
import jax
import jax.numpy as jnp


def make_step():
    def step(w, x, y, lr):
        rate = float(lr)
        loss, grad = jax.value_and_grad(lambda v: jnp.mean((x @ v - y) ** 2))(w)
        return jax.jit(lambda w, g: w - rate * g)(w, grad), loss

    return step
