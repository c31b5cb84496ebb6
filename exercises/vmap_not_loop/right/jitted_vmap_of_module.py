"""The score of one example a callable object (a module's __call__), batched with jax.vmap and
jitted once at import."""
import jax


class Scorer:
    def __call__(self, x, w):
        return x @ w


_batched = jax.jit(jax.vmap(Scorer(), in_axes=(0, None)))


def scores(xs, w):
    return _batched(xs, w)
