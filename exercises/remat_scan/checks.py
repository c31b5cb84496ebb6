"""Checks for remat_scan, built from the grader's check library.

The gradient of a tanh network with respect to its layers' weights, the layers a
``jax.lax.scan`` whose body is wrapped in ``jax.checkpoint``: the backward pass recomputes each
layer from its input instead of reading intermediates stored by the forward pass. The numbers
are the same with or without it; the memory XLA needs is not, and that is what is judged (the
temporary buffers of the compiled program, per device). Values are judged against a float64
NumPy backward pass within a bound on the error of float32 arithmetic, carried through it."""
import numpy as np

from grader.authoring import (FLOAT32, Array, AvoidsPrimitives, DeviceMemoryAtMost, LoadsFunction, Returns, Signature,
                              UsesPrimitive, ValueProperty, WithinLimits, arguments, float32_array, shapes)

SIGNATURE = Signature({"ws": Array("float32", "L d d"), "x": Array("float32", "b d")},
                      returns=Array("float32", "L d d"))


def _distinct(shape: tuple[int, ...], scale: float) -> np.ndarray:
    """Distinct values in [-scale, scale), shuffled (a stride coprime with the size)."""
    count = int(np.prod(shape))
    return ((np.arange(count) * 7919 % count) / count * 2 * scale - scale).astype(np.float32).reshape(shape)


# Big enough that the stored activations dominate what XLA allocates, small enough to compile and
# run in well under a second: 32 layers of width 128 (ws: 2 MiB) on a batch of 64 (x: 32 KiB, the
# size of one layer's activations; 32 of them: 1 MiB). Weights of size ~1/sqrt(d) keep tanh unsaturated.
L, B, D = 32, 64, 128
PROBE = {"ws": _distinct((L, D, D), 1.5 / np.sqrt(D)), "x": _distinct((B, D), 1.0)}


def _forward(ws: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
    """c_0 = x, c_{i+1} = tanh(c_i @ ws[i]), in float64: every activation, c_L last."""
    cs = [x.astype(np.float64)]
    for w in ws.astype(np.float64):
        cs.append(np.tanh(cs[-1] @ w))
    return cs


def exact_gradient(ws: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d sum(c_L ** 2) / d ws by hand, in float64, from the stored activations."""
    cs, w64 = _forward(ws, x), ws.astype(np.float64)
    grads = np.zeros(w64.shape)
    dc = 2 * cs[-1]
    for i in reversed(range(len(w64))):
        dz = dc * (1 - cs[i + 1] ** 2)
        grads[i] = cs[i].T @ dz
        dc = dz @ w64[i].T
    return grads


# XLA's float32 tanh on CPU: at most 2.41 eps of relative error over 10^7 values from 1e-3 to 10
# in magnitude (measured); allowed 4.
TANH_EPS = 4


def gradient_tolerance(ws: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A bound on |float32 gradient - exact gradient|, entry by entry: the exact computation
    again, in float64, carrying beside each value ``v`` a bound ``e`` on the float32 error in it
    (a running error analysis, as Higham's). Each operation adds its own rounding (eps times
    the magnitude it computes: a dot product of length k, (k + 1) eps of the sum of |terms|;
    tanh TANH_EPS eps of its value; subnormals flushed, tiny each) to the errors of its operands
    carried through it: through a product by the magnitude of the other factor (and the product
    of both errors), through tanh by its largest slope within the error (at most 1, so nothing
    grows where tanh saturates). The bound holds whatever order XLA sums in and however it
    writes tanh's derivative ((1 - c)(1 + c), 1 - c², or JAX's (1 - c) + (1 - c)c). Measured
    over 2,000 draws of INPUTS (seeds 1 and 7), on a jitted scan with jax.checkpoint and
    without, and on an unrolled loop: the largest error is 0.41 of the bound (seed 1, an entry
    of 1.9e-37, where XLA flushes subnormals to zero), 0.36 under seed 7."""
    eps, tiny = float(FLOAT32.eps), float(FLOAT32.tiny)
    cs, w64 = _forward(ws, x), ws.astype(np.float64)
    size = np.abs(w64)
    d, b = ws.shape[1], x.shape[0]
    errors = [np.zeros_like(cs[0])]  # of c_0 = x: none
    for i in range(len(w64)):
        c, e = np.abs(cs[i]), errors[i]
        z_error = e @ size[i] + (d + 1) * (eps * ((c + e) @ size[i]) + tiny)
        slope = 1 - np.tanh(np.maximum(np.abs(cs[i] @ w64[i]) - z_error, 0)) ** 2
        errors.append(slope * z_error + TANH_EPS * eps * np.abs(cs[i + 1]) + tiny)
    grads = np.zeros(w64.shape)
    dc, dc_error = 2 * cs[-1], 2 * errors[-1]
    for i in reversed(range(len(w64))):
        c, e = np.abs(cs[i + 1]), errors[i + 1]
        s = 1 - c ** 2  # tanh's slope, three roundings of at most (1 + |c|)² each
        s_error = (2 * c + e) * e + 3 * eps * (1 + c + e) ** 2
        dz = dc * s
        dz_error = dc_error * (s + s_error) + np.abs(dc) * s_error + eps * np.abs(dz) + tiny
        a, a_error, g = np.abs(cs[i]), errors[i], np.abs(dz)
        grads[i] = a_error.T @ g + (a + a_error).T @ dz_error + (b + 1) * (
            eps * ((a + a_error).T @ (g + dz_error)) + tiny)
        dc = dz @ w64[i].T
        dc_error = dz_error @ size[i].T + (d + 1) * (eps * ((g + dz_error) @ size[i].T) + tiny)
    return grads


INPUTS = arguments(
    # no layers (the gradient is empty), an empty batch (zeros), one neuron, then deeper and wider ones
    shapes("L b d", (0, 3, 2), (1, 0, 3), (1, 1, 1), (2, 4, 3), (5, 3, 6), (12, 2, 4)),
    ws=float32_array("L d d", bound=4.0), x=float32_array("b d", bound=4.0))

# Temporary buffers of the probe's gradient program on XLA's CPU backend (jax 0.10.2), in bytes;
# one activation per layer, for all 32 layers, is 1 MiB (1/2 of ws):
#   scan, jax.checkpoint on the body (any spelling, value_and_grad)   1,212,612  (each layer's input)
#   the same with scan(..., unroll=2)                                 1,376,452
#   scan, checkpoint with policy=dots_saveable                        2,261,188  (the products too)
#   unrolled Python loop under jit, without / with checkpoint         3,145,728 / 4,128,768
#   scan without checkpoint; checkpoint around the whole loss         3,309,764  (about 3 per layer)
# The budget, 3/4 of ws (1,572,864 bytes), is 1.30 times what reference.py and right/ need and 1/1.44 of
# the least a wrong one does. The batch is smaller than the width on purpose: an unrolled loop
# keeps about the activations plus ws, a checkpointed scan the activations alone, so the gap is
# ws (at b = 256: 6,291,456 unrolled against 4,653,252 checkpointed, too close for a budget).
MEMORY = DeviceMemoryAtMost(
    id="structure.memory", title="The backward pass keeps no more than each layer's input (XLA's temporaries)",
    of="ws", fraction=3 / 4, kind="temp",
    hint="Wrap the scan's body in jax.checkpoint (jax.lax.scan(jax.checkpoint(layer), x, ws)) and jit the "
         "whole gradient: the backward pass then recomputes tanh(c @ w) from each layer's input instead of "
         "storing its intermediates. A policy that saves the products (dots_saveable) stores them again.")

CHECKS = [
    LoadsFunction(),
    Returns(id="type.like_ws", title="Returns a float32 JAX array shaped like ws (L, d, d)",
            hint="Differentiate with respect to ws (jax.grad's argnums=0) and return that gradient alone."),
    ValueProperty(id="value.random_networks", title="Computes the gradient of random networks (Hypothesis)",
                  inputs=INPUTS, expected=exact_gradient, tolerance=gradient_tolerance,
                  hint="loss = jnp.sum(c_L ** 2) (a sum, not a mean), c_{i+1} = jnp.tanh(c_i @ ws[i]), c_0 = x; "
                       "return jax.grad(loss)(ws, x)."),
    UsesPrimitive(id="structure.scan_over_layers", title="The layers are a jax.lax.scan over ws", operation="scan",
                  reads="ws",
                  hint="jax.lax.scan(layer, x, ws) with layer(c, w) returning (jnp.tanh(c @ w), None): a "
                       "Python loop over the layers unrolls them into the program."),
    MEMORY,
    AvoidsPrimitives(id="structure.no_host_work", title="The gradient is computed in JAX, not on the host",
                     operations=("pure_callback", "io_callback"), host=True,
                     why="A host callback computes outside XLA, where neither jax.checkpoint nor its memory "
                         "applies."),
    WithinLimits(),
]
