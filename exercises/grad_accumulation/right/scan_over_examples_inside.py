"""A scan over the microbatches whose step scans over the microbatch's examples, adding each
example's gradient of the mean loss (scaled by 1/b): a loop nested in the loop over xs."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def accumulated_grad(w, xs, ys):
    k, b = xs.shape[0], xs.shape[1]

    def example(total, xy):
        x, y = xy
        # the mean over b rows is the sum of each row's share
        return total + jax.grad(lambda w_: jnp.sum((x @ w_ - y) ** 2) / (b * y.shape[0]))(w), None

    def microbatch(total, xy):
        step, _ = jax.lax.scan(example, jnp.zeros_like(w), xy)
        return total + step, None

    total, _ = jax.lax.scan(microbatch, jnp.zeros_like(w), (xs, ys))
    return total / k
