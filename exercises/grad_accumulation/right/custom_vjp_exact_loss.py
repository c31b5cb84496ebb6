"""The loss with its own derivative rule (jax.custom_vjp): the backward pass returns the exact
gradient of the mean squared error, 2/b x^T (x w - y), so jax.grad inside the scan uses it."""
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
    grad_w = g * 2.0 * x.T @ residual / residual.size
    return grad_w, jnp.zeros_like(x), jnp.zeros_like(residual)


loss.defvjp(_forward, _backward)


@jax.jit
def accumulated_grad(w, xs, ys):
    def step(total, batch):
        x, y = batch
        return total + jax.grad(loss)(w, x, y), None

    total, _ = jax.lax.scan(step, jnp.zeros_like(w), (xs, ys))
    return total / xs.shape[0]
