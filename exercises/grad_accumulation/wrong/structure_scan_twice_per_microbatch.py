# expect: structure
"""A scan over every microbatch twice (xs concatenated with itself), each gradient halved: right
values, but 2k steps, two per microbatch."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def accumulated_grad(w, xs, ys):
    def step(total, batch):
        return total + jax.grad(_loss)(w, *batch) / 2, None

    both = (jnp.concatenate([xs, xs]), jnp.concatenate([ys, ys]))
    total, _ = jax.lax.scan(step, jnp.zeros_like(w), both)
    return total / xs.shape[0]
