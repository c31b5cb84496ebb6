# expect: value
"""The loss with its own derivative rule (jax.custom_vjp) whose backward pass forgets the
factor 2 of the squared error: the primal is right, the gradient it gives is half of it."""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def _forward(w, x, y):
    residual = x @ w - y
    return jnp.mean(residual ** 2), (x, residual)


def _backward(saved, g):
    x, residual = saved
    return g * x.T @ residual / residual.size, jnp.zeros_like(x), jnp.zeros_like(residual)


loss.defvjp(_forward, _backward)


@jax.jit
def accumulated_grad(w, xs, ys):
    def step(total, batch):
        x, y = batch
        return total + jax.grad(loss)(w, x, y), None

    total, _ = jax.lax.scan(step, jnp.zeros_like(w), (xs, ys))
    return total / xs.shape[0]
