"""An Equinox-style module: the step is an object with __call__, jitted once in make_step."""
import jax
import jax.numpy as jnp


class LinearStep:
    def loss(self, w, x, y):
        return jnp.mean((x @ w - y) ** 2)

    def __call__(self, w, x, y, lr):
        loss, grad = jax.value_and_grad(self.loss)(w, x, y)
        return w - lr * grad, loss


def make_step():
    return jax.jit(LinearStep())
