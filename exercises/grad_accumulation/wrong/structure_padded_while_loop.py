# expect: structure
"""Pads xs and ys with zero microbatches to a fixed 16 and runs a fori_loop with the traced bound 16
(a while loop): right values for any k up to 16, but the loop runs the padding's count of steps,
not one per microbatch, over an array longer than xs."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def _run(w, xs, ys, n):
    return jax.lax.fori_loop(0, n, lambda i, t: t + jax.grad(_loss)(w, xs[i], ys[i]), jnp.zeros_like(w))


def accumulated_grad(w, xs, ys):
    k = xs.shape[0]
    xs = jnp.concatenate([xs, jnp.zeros((16 - k, *xs.shape[1:]), xs.dtype)])
    ys = jnp.concatenate([ys, jnp.zeros((16 - k, *ys.shape[1:]), ys.dtype)])
    return _run(w, xs, ys, jnp.int32(16)) / k
