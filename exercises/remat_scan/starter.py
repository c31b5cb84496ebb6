"""Rematerialisation: a scan's backward pass within a memory budget.

Write loss_grad(ws, x), where ws is a float32 JAX array of shape (L, d, d) (the weights of L
layers) and x a float32 array of shape (b, d) (a batch). The network is a scan over the
layers: c_0 = x, c_{i+1} = tanh(c_i @ ws[i]), and loss = sum(c_L ** 2). Return the gradient
of the loss with respect to ws (float32, shaped like ws), computed inside one jax.jit function,
the layers a jax.lax.scan whose body is wrapped in jax.checkpoint, so that the backward pass
recomputes each layer from its input instead of storing its intermediates.
The grader measures the temporary memory XLA allocates for your jitted gradient.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp


def loss_grad(ws: jax.Array, x: jax.Array) -> jax.Array:
    # Your code here: a checkpointed scan body, jax.grad, all under jax.jit.
    raise NotImplementedError("loss_grad is not written yet")
