"""One SGD step, compiled once, updating w in place.

Write sgd_step(w, g, lr), where w and g are float32 JAX arrays of one shape and lr is a
Python float (the learning rate, which changes from step to step):

1. return w - lr * g, computed by a jax.jit function;
2. that function must be compiled once for arrays of one shape, whatever lr is: pass lr as an
   ordinary (traced) argument, not a static one, and jit the function once, not on every call;
3. it must donate w (donate_argnums or donate_argnames), so XLA writes the new w into w's
   buffer instead of allocating another.

The grader calls your function several times with new values and learning rates, counts the
compilations, and checks that w's buffer was donated and reused.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax


def sgd_step(w: jax.Array, g: jax.Array, lr: float) -> jax.Array:
    # Your code here: a jitted step, compiled once, donating w.
    raise NotImplementedError("sgd_step is not written yet")
