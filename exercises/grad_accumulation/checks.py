"""Checks for grad_accumulation, built from the grader's check library.

The gradient of a mean squared error over k microbatches, accumulated: one jitted loop over the
microbatches (a ``jax.lax.scan``, or a ``fori_loop``) carries the running sum of their gradients
from ``zeros_like(w)``, and the sum divided by k is returned. The numbers equal the gradient of
the loss averaged over all microbatches (the full batch's gradient); what accumulation buys is
memory: the program holds one microbatch's residuals at a time, where the full-batch gradient
holds all k. Values are judged against a float64 NumPy gradient within a bound on the error of
float32 arithmetic, carried through it; structure by the loop's length (k, from the input: a
length copied from the probe, or a padded one, does not follow a longer xs), the steps XLA runs
(k, and 2k when xs is twice as long: a loop of a fixed count that masks the extra steps fails),
XLA's temporaries not growing with k (a running sum in the carry, not every gradient stacked and
averaged), the program's size (an unrolled Python loop grows with k), XLA's temporary buffers,
and no host work."""
import numpy as np

from grader.authoring import (FLOAT32, AnyOf, Array, AvoidsPrimitives, DeviceMemoryAtMost, LoadsFunction, LoopLength,
                              LoopRuns, MemoryGrowth, OperationCount, Returns, Signature, ValueProperty, WhileReads, WithinLimits, arguments,
                              float32_array, shapes)

SIGNATURE = Signature({"w": Array("float32", "d m"), "xs": Array("float32", "k b d"), "ys": Array("float32", "k b m")},
                      returns=Array("float32", "d m"))


def _distinct(shape: tuple[int, ...], scale: float, stride: int) -> np.ndarray:
    """Distinct values in [-scale, scale), shuffled (a stride coprime with the size)."""
    count = int(np.prod(shape))
    return ((np.arange(count) * stride % count) / count * 2 * scale - scale).astype(np.float32).reshape(shape)


# 6 microbatches of 32 rows (a count and a size no value test uses), d = 8 inputs, m = 256 outputs:
# the residuals x @ w - y of one microbatch are 32 KiB, of all six 192 KiB (ys), while w and its
# running sum are 8 KiB each, so what the program keeps at once tells one microbatch from all.
K, B, D, M = 6, 32, 8, 256
PROBE = {"w": _distinct((D, M), 0.5, 7919), "xs": _distinct((K, B, D), 1.0, 7907),
         "ys": _distinct((K, B, M), 2.0, 7901)}


def exact_gradient(w: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """(1/k) Σ_i ∇_w mean((x_i w - y_i)²) = (1/k) Σ_i (2 / (b m)) x_iᵀ (x_i w - y_i), in float64:
    the gradient of the loss averaged over the full batch."""
    w64, xs64, ys64 = w.astype(np.float64), xs.astype(np.float64), ys.astype(np.float64)
    k, b, _ = xs.shape
    m = w.shape[1]
    total = np.zeros(w64.shape)
    for x, y in zip(xs64, ys64):
        total += 2.0 / (b * m) * (x.T @ (x @ w64 - y))
    return total / k


def gradient_tolerance(w: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """A bound on |float32 gradient - exact gradient|, entry by entry, carried through the
    computation in float64. Per microbatch, with c = 2 / (b m): the residual r = x w - y is off by
    at most e_r = (d + 2) eps (|x| |w| + |y|) + tiny (a dot of length d, then a subtraction); the
    gradient c xᵀ r by c (|x|ᵀ e_r + (b + 3) eps |x|ᵀ (|r| + e_r)) + (b + 1) tiny (a dot of length
    b, the scaling by 2 and by 1/(b m)). The running sum adds at most eps Σ|g_i| per addition (k of
    them), the division by k one rounding more. Any order of the same operations is within it: the
    full batch's gradient in one product (k b terms) too. Doubled for safety."""
    eps, tiny = float(FLOAT32.eps), float(FLOAT32.tiny)
    w64, xs64, ys64 = np.abs(w.astype(np.float64)), xs.astype(np.float64), ys.astype(np.float64)
    k, b, d = xs.shape
    m = w.shape[1]
    c = 2.0 / (b * m)
    errors, sizes = np.zeros(w.shape), np.zeros(w.shape)
    for x, y in zip(xs64, ys64):
        ax = np.abs(x)
        r = np.abs(x @ w.astype(np.float64) - y)
        e_r = (d + 2) * eps * (ax @ w64 + np.abs(y)) + tiny
        errors += c * (ax.T @ e_r + (b + 3) * eps * (ax.T @ (r + e_r))) + (b + 1) * tiny
        sizes += c * (ax.T @ (r + e_r))
    return 2 * ((errors + (k + 1) * eps * (sizes + errors)) / k + tiny)


# k and b are at least 1 (a mean over no microbatch, or over an empty one, is not defined); one
# microbatch, one row, one input, one output, then ordinary ones.
INPUTS = arguments(
    shapes("k b d m", (1, 1, 1, 1), (1, 3, 2, 2), (2, 1, 3, 1), (3, 2, 1, 4), (4, 3, 2, 3), (5, 2, 3, 2)),
    w=float32_array("d m", bound=1e3), xs=float32_array("k b d", bound=1e3), ys=float32_array("k b m", bound=1e3))

# Temporary buffers of the probe's program on XLA's CPU backend (jax 0.10.2), in bytes; ys (every
# microbatch's residuals at once) is 196,608:
#   scan or fori_loop over the microbatches (reference.py)        42,052
#   jax.grad of the loss over xs reshaped to (k b, d) at once    196,608
#   the same on xs (k, b, d) as it is                            393,216
#   a Python loop over the microbatches under jit                209,920
# The budget, 1/2 of ys (98,304 bytes), is 2.3 times what the reference needs and half of the least
# the full batch needs.
MEMORY = DeviceMemoryAtMost(
    id="structure.memory", title="The program holds one microbatch's residuals at a time (XLA's temporaries)",
    of="ys", fraction=1 / 2, kind="temp",
    hint="Jit the whole function and loop over the microbatches with jax.lax.scan: each step computes one "
         "microbatch's gradient and adds it to the carry. jax.grad of the loss over all of xs at once holds "
         "every microbatch's residuals together, which is what accumulation avoids.")

CHECKS = [
    LoadsFunction(),
    Returns(id="type.like_w", title="Returns a float32 JAX array shaped like w, (d, m)",
            hint="Return the accumulated gradient with respect to w alone: the carry divided by k."),
    ValueProperty(id="value.full_batch_gradient",
                  title="Equals the gradient of the loss averaged over all microbatches (Hypothesis)",
                  inputs=INPUTS, expected=exact_gradient, tolerance=gradient_tolerance,
                  hint="Start the carry from jnp.zeros_like(w), add jax.grad(loss)(w, x, y) for each microbatch, "
                       "and divide the sum by k = xs.shape[0] (not by b, and not not at all)."),
    # A scan (and a fori_loop with Python bounds, which JAX runs as one) states its length: k on the
    # probe, 2k when xs and ys are twice as long. A fori_loop with traced bounds is a while loop, whose
    # trip count no program states: it must read xs as it is (not padded to a fixed count).
    AnyOf(LoopLength(id="structure.loop_per_microbatch.scan", title="a jax.lax.scan of k steps reading xs",
                     of=("xs", 0), vary={"xs": 0, "ys": 0}, reads="xs"),
          WhileReads(id="structure.loop_per_microbatch.while", title="a jax.lax.while_loop reading xs as it is",
                     reads="xs"),
          id="structure.loop_per_microbatch", title="One loop JAX sees, one step per microbatch (k from xs)",
          description="loop over the k microbatches of xs in one loop JAX sees",
          hint="jax.lax.scan(step, jnp.zeros_like(w), (xs, ys)): its length is xs.shape[0] whatever k is. A "
               "fori_loop(0, 6, ...) written for one input, or a loop over xs padded to a fixed count, does "
               "not follow k."),
    LoopRuns(id="structure.step_per_microbatch", title="XLA runs one loop step per microbatch: k steps, 2k for 2k",
             of=("xs", 0), vary={"xs": 0, "ys": 0},
             hint="Loop over the microbatches themselves: jax.lax.scan over (xs, ys), or a loop bound of "
                  "xs.shape[0]. A loop of a fixed 64 steps that masks those past k runs 64 steps for any k."),
    MemoryGrowth(id="structure.running_sum", title="The carry holds a running sum: memory does not grow with k",
                 vary={"xs": 0, "ys": 0}, per="w", fraction=1 / 2,
                 hint="Add each microbatch's gradient to the loop's carry. jax.lax.map (or a scan that outputs every "
                      "gradient) followed by a mean keeps k gradients at once."),
    OperationCount(id="structure.does_not_grow", title="The program does not grow with the number of microbatches",
                   grows_with={"xs": 0, "ys": 0}, at_most=64,
                   hint="A Python for loop over the microbatches runs (and traces) its body once per microbatch: "
                        "the program then grows with k. A scan holds the body once."),
    MEMORY,
    AvoidsPrimitives(id="structure.no_host_work", title="The gradient is computed in JAX, not on the host",
                     operations=("pure_callback", "io_callback"), host=True,
                     why="A gradient computed in NumPy (or in a callback) runs outside XLA: neither the loop nor "
                         "its memory is the program's."),
    WithinLimits(),
]
