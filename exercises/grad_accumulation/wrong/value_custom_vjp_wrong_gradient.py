# expect: value
"""The squared error with its own derivative rule (jax.custom_vjp) whose backward pass forgets
the factor 2 of the square: the loss is right, the gradient it gives is half of it."""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def mse(prediction, target):
    return jnp.mean(jnp.square(prediction - target))


def _mse_forward(prediction, target):
    return mse(prediction, target), prediction - target


def _mse_backward(difference, cotangent):
    d_prediction = cotangent * difference / difference.size
    return d_prediction, -d_prediction


mse.defvjp(_mse_forward, _mse_backward)


@jax.jit
def accumulated_grad(w, xs, ys):
    gradient = jax.grad(lambda w, x, y: mse(x @ w, y))
    total = jax.lax.fori_loop(0, xs.shape[0], lambda i, acc: acc + gradient(w, xs[i], ys[i]),
                              jnp.zeros_like(w))
    return total / xs.shape[0]
