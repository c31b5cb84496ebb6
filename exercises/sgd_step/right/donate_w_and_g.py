"""Both buffers donated, as a training loop that drops its gradients does, with jax.jit's
decorator form: the one output takes w's buffer (XLA's input-output alias); g's has no
output left to take it, so JAX warns and keeps it."""
import jax


@jax.jit(donate_argnames=("w", "g"))
def sgd_step(w, g, lr):
    return w - lr * g
