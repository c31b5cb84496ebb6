"""A training step made once, compiled once, called with a changing learning rate.

Write make_step(), which takes no arguments and returns step(w, x, y, lr). The grader calls
make_step() once and then calls the step it returns many times, as a training loop does:

- w: float32 array (k,), the weights; x: float32 array (n, k); y: float32 array (n,), n >= 1;
  lr: a Python float, the learning rate, which changes from step to step;
- loss = mean((x @ w - y) ** 2) of the w given, grad = its gradient with respect to w;
- return (w - lr * grad, loss): the new weights and the loss before the update.

The step must be jitted and compiled once for arrays of one shape, whatever the values and the
learning rate: jit it once, and pass lr as an ordinary (traced) argument.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp


def make_step():
    # Your code here: build the step, jit it once, return it.
    raise NotImplementedError("make_step is not written yet")
