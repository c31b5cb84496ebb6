# expect: type
"""Returns (mean loss, gradient), as jax.value_and_grad does, where the gradient alone is asked."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def accumulated_grad(w, xs, ys):
    def step(carry, xy):
        loss, grad = jax.value_and_grad(_loss)(w, *xy)
        return (carry[0] + loss, carry[1] + grad), None

    (loss, grad), _ = jax.lax.scan(step, (jnp.float32(0), jnp.zeros_like(w)), (xs, ys))
    k = xs.shape[0]
    return loss / k, grad / k
