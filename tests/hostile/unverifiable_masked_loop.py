"""A loop that always runs 64 steps and masks those past k (grad_accumulation's
wrong/structure_masked_fixed_while_loop), behind 600 eager additions of zero: an account of more
operations than the witness takes (grader.child.account.MAX_STEPS), so the witness cannot run
it. XLA's trip counts are known only from that run, so the loop check fails, saying why, rather
than passing for want of a count to read (issue #55 point 7)."""
import jax
import jax.numpy as jnp


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


@jax.jit
def _masked(w, xs, ys):
    k = xs.shape[0]

    def body(carry):
        i, total = carry
        j = jnp.minimum(i, k - 1)
        return i + 1, total + jnp.where(i < k, jax.grad(_loss)(w, xs[j], ys[j]), 0.0)

    _, total = jax.lax.while_loop(lambda carry: carry[0] < 64, body, (jnp.int32(0), jnp.zeros_like(w)))
    return total / k


def accumulated_grad(w, xs, ys):
    for _ in range(600):
        w = w + 0.0
    return _masked(w, xs, ys)
