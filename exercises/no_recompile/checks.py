"""Checks for no_recompile, built from the grader's check library.

``make_step()`` builds a training step once; the grader calls the step it returns many times,
as a training loop does. One step of gradient descent on a linear model's mean squared error,
returning the new weights and the loss before the update: a tuple of an array and a scalar.
The step must be compiled once while every value changes, the learning rate included (a
traced argument, not a static one). Values are judged against the exact step in float64 within
a bound derived from the float32 computation."""
import math

import numpy as np
from hypothesis import strategies as st

from grader.authoring import (FLOAT32, Array, AvoidsPrimitives, CompilesAtMost, LoadsFunction, Returns, Scalar,
                              Signature, UsesPrimitive, ValueProperty, WithinLimits, arguments, float32_array, shapes)

SIGNATURE = Signature({"w": Array("float32", "k"), "x": Array("float32", "n k"), "y": Array("float32", "n"),
                       "lr": Scalar("float")},
                      returns=(Array("float32", "k"), Array("float32", ())), factory=True)

# Distinct values, sizes no value test uses, a learning rate that is not a round number.
PROBE = {"w": np.array([0.5, -1.25, 2.0, 0.75], np.float32),
         "x": (np.arange(24, dtype=np.float32).reshape(6, 4) * 0.25 - 3.0),
         "y": np.array([1.0, -2.0, 0.5, 3.0, -1.5, 2.5], np.float32), "lr": 0.3}

# n >= 1 (a mean over no examples is undefined). Elements are bounded by 1e3: residuals stay
# below k·1e6 + 1e3, the loss below (5e6)², far from float32's 3.4e38.
INPUTS = arguments(shapes("n k", (1, 1), (2, 3), (7, 1), (16, 5), (3, 2)),
                   w=float32_array("k", bound=1e3), x=float32_array("n k", bound=1e3),
                   y=float32_array("n", bound=1e3),
                   lr=st.floats(0.0009765625, 1.0, allow_nan=False, width=32))


def _residuals(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x @ w - y, each entry a math.fsum of float64 products of float32 values (exact products)."""
    w64, x64, y64 = (np.asarray(v, np.float64) for v in (w, x, y))
    return np.array([math.fsum([*(x64[i] * w64).tolist(), -y64[i]]) for i in range(len(y64))])


def exact_step(w: np.ndarray, x: np.ndarray, y: np.ndarray, lr: float) -> tuple[np.ndarray, float]:
    """loss = mean((x @ w - y)²), grad = 2/n · xᵀ r; the new w is w - lr · grad, lr as the
    float32 it is inside the program (a Python float is weakly typed there)."""
    r, n = _residuals(w, x, y), len(y)
    grad = np.array([2.0 / n * math.fsum((np.asarray(x, np.float64)[:, j] * r).tolist()) for j in range(len(w))])
    loss = math.fsum((r * r).tolist()) / n
    return np.asarray(w, np.float64) - float(np.float32(lr)) * grad, loss


def step_tolerance(w: np.ndarray, x: np.ndarray, y: np.ndarray, lr: float) -> tuple[np.ndarray, float]:
    """How far a correct float32 step may stray, by counting roundings (each at most eps times
    the magnitude of what it rounds), with a factor of 2 to spare:

    - a residual is k products and sums and a subtraction: off by d ≤ (k + 1)·eps·R, where
      R = |x| @ |w| + |y| bounds every partial sum;
    - the loss squares them (2|r|d + d² from the residuals' errors) and averages n of them
      (n + 2 roundings of at most Σ(|r| + d)² / n);
    - the gradient 2/n · xᵀ r meets the residuals' errors times 2/n·|x|, and n + 2 roundings
      of at most 2/n · |x|ᵀ (|r| + d);
    - the update rounds a product and a difference (eps·(|w| + 2·lr·|grad|)) and carries
      lr times the gradient's error. XLA flushes subnormal results: a tiny each."""
    eps, tiny = float(FLOAT32.eps), float(FLOAT32.tiny)
    x64, w64 = np.abs(np.asarray(x, np.float64)), np.abs(np.asarray(w, np.float64))
    n, k, rate = len(y), len(w), float(np.float32(lr))
    r = np.abs(_residuals(w, x, y))
    d = (k + 1) * eps * (x64 @ w64 + np.abs(np.asarray(y, np.float64))) + tiny
    loss = np.sum(2 * r * d + d * d) / n + (n + 2) * eps * np.sum((r + d) ** 2) / n + tiny
    grad_error = 2.0 / n * (x64.T @ d) + (n + 2) * eps * 2.0 / n * (x64.T @ (r + d)) + tiny
    grad = 2.0 / n * (x64.T @ r)
    new_w = rate * grad_error + eps * (w64 + 2 * rate * (grad + grad_error)) + tiny
    return 2 * new_w, 2 * float(loss)


CHECKS = [
    LoadsFunction(title="The file loads, and make_step() returns step(w, x, y, lr)"),
    Returns(id="type.new_w_and_loss", title="The step returns (new w, loss): a float32 array shaped like w and a "
                                            "float32 scalar",
            hint="return w - lr * grad, loss: a tuple of two JAX arrays, the loss of shape ()."),
    ValueProperty(id="value.random_steps", title="Computes the step and the loss on random inputs (Hypothesis)",
                  inputs=INPUTS, expected=exact_step, tolerance=step_tolerance,
                  hint="loss = jnp.mean((x @ w - y) ** 2) of the w given; the new w is w - lr * grad of that loss."),
    CompilesAtMost(id="structure.compiles_once", title="Compiled once over many steps while every value changes",
                   limit=1, calls=5,
                   hint="Build and jit the step once, in make_step (or at import), and pass lr as an ordinary "
                        "argument: static_argnums makes each learning rate a new program, and jax.jit applied "
                        "inside the step (to a new function or a partial) makes a new function on every call."),
    UsesPrimitive(id="structure.loss_in_jit", title="The loss and its gradient are computed inside the jitted step",
                  operation="dot_general", inside="jit", reads="x", only_inside=True,
                  hint="Put the whole step, x @ w and the gradient included, inside the function you jit: work done "
                       "outside it is dispatched operation by operation on every call."),
    AvoidsPrimitives(id="structure.no_host_work", title="The step runs in JAX, not on the host",
                     operations=("pure_callback", "io_callback"),
                     hint="Compute the loss and its gradient with JAX operations inside the jitted step."),
    WithinLimits(),
]
