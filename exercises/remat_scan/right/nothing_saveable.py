"""jax.checkpoint with the policy that saves nothing, spelled out; the body a lambda."""
import jax
import jax.numpy as jnp

LAYER = jax.checkpoint(lambda c, w: (jnp.tanh(c @ w), None), policy=jax.checkpoint_policies.nothing_saveable)


def loss(ws, x):
    c, _ = jax.lax.scan(LAYER, x, ws)
    return jnp.sum(c ** 2)


loss_grad_jitted = jax.jit(jax.grad(loss))


def loss_grad(ws, x):
    return loss_grad_jitted(jnp.asarray(ws), jnp.asarray(x))
