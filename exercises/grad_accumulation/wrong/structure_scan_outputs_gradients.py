# expect: structure
"""A scan whose carry is unused and whose outputs are every microbatch's gradient, summed after
the loop: one step per microbatch, but the k gradients are stacked, not accumulated."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def accumulated_grad(w, xs, ys):
    def step(count, batch):
        return count + 1, jax.grad(_loss)(w, *batch)

    count, grads = jax.lax.scan(step, 0, (xs, ys))
    return jnp.sum(grads, axis=0) / count
