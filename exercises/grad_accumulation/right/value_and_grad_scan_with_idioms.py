"""A scan over (xs, ys) written the way training code often is: jax.value_and_grad of a loss
that also reports itself through logging, a functools.partial step, jax.tree.map to add the
gradient into the carry, and warnings.catch_warnings around the jitted call."""
import functools
import logging
import warnings

import jax
import jax.numpy as jnp

log = logging.getLogger("train")
logging.basicConfig(level=logging.WARNING)


def _loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def _step(w, carry, xy):
    _, grad = jax.value_and_grad(_loss)(w, *xy)
    return jax.tree.map(jnp.add, carry, grad), None


@jax.jit
def _accumulate(w, xs, ys):
    total, _ = jax.lax.scan(functools.partial(_step, w), jnp.zeros_like(w), (xs, ys))
    return total / xs.shape[0]


def accumulated_grad(w, xs, ys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = _accumulate(w, xs, ys)
    log.debug("accumulated %d microbatches", xs.shape[0])
    return result
