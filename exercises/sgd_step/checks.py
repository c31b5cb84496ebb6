"""Checks for sgd_step, built from the grader's check library.

One step of gradient descent, ``w - lr * g``, in a jitted function that is compiled once while
the learning rate changes (lr a traced argument, not a static one) and that donates w's buffer
(XLA writes the new w where the old one was). Values are judged against the exact step in
float64 within the error of float32 arithmetic."""
import numpy as np
from hypothesis import strategies as st

from grader.authoring import (FLOAT32, LENGTHS, Array, AvoidsPrimitives, CompilesAtMost, Donates, LoadsFunction,
                              Returns, Scalar, Signature, UsesPrimitive, ValueProperty, WithinLimits, arguments, dims,
                              float32_array)

SIGNATURE = Signature({"w": Array("float32", "n"), "g": Array("float32", "n"), "lr": Scalar("float")},
                      returns=Array("float32", "n"))

# Distinct values, a length no value test uses, a learning rate that is not a round number.
PROBE = {"w": np.array([1.5, -2.0, 0.25, 4.0, -0.75], np.float32),
         "g": np.array([0.5, 1.0, -3.0, 0.125, 2.0], np.float32), "lr": 0.3}


def exact_step(w: np.ndarray, g: np.ndarray, lr: float) -> np.ndarray:
    # lr enters the program as a float32 (a Python float is weakly typed there)
    return w.astype(np.float64) - float(np.float32(lr)) * g.astype(np.float64)


def step_tolerance(w: np.ndarray, g: np.ndarray, lr: float) -> np.ndarray:
    """Two float32 roundings (the product, the difference), each within half an epsilon of
    what it rounds: |lr * g| and |w| + |lr * g| bound them (a difference may cancel)."""
    product = np.abs(float(np.float32(lr)) * g.astype(np.float64))
    return float(FLOAT32.eps) * (product + np.abs(w.astype(np.float64)) + product) + float(FLOAT32.tiny)


TIME_VARIED = CompilesAtMost(
    id="structure.compiles_once", title="Compiled once while the learning rate changes", limit=1, calls=4,
    hint="Jit the step once, at import (a decorator), and pass lr as an ordinary argument: static_argnums "
         "makes every new learning rate a new program, and jax.jit inside the function makes a new function "
         "on every call.")

CHECKS = [
    LoadsFunction(),
    Returns(id="type.like_w", title="Returns a float32 JAX array shaped like w",
            hint="Return the JAX array the jitted step computes, shaped like w."),
    ValueProperty(id="value.random_steps", title="Computes w - lr * g on random inputs (Hypothesis)",
                  inputs=arguments(dims(n=LENGTHS), w=float32_array("n", bound=1e15),
                                   g=float32_array("n", bound=1e15),
                                   lr=st.floats(0.0009765625, 1.0, allow_nan=False, width=32)),
                  expected=exact_step, tolerance=step_tolerance,
                  hint="The step is w - lr * g: subtract (descend), scale the gradient by lr once."),
    TIME_VARIED,
    Donates(id="structure.donates_w", title="Donates w's buffer, which XLA reuses", argument="w",
            hint="jax.jit(..., donate_argnums=0) (or donate_argnames='w') on the step itself, given w as your "
                 "function received it: donating a copy, or g, leaves w's buffer alone."),
    UsesPrimitive(id="structure.step_in_jit", title="The step's arithmetic runs inside the jitted function",
                  operation="mul", inside="jit", reads="g", only_inside=True,
                  hint="Compute w - lr * g inside the jitted function that donates w: a step computed eagerly and "
                       "only handed to a jitted function runs operation by operation, and its donation saves nothing."),
    AvoidsPrimitives(id="structure.no_host_work", title="The step runs in JAX, not on the host",
                     operations=("pure_callback", "io_callback"),
                     hint="Compute w - lr * g with JAX operations inside the jitted function."),
    WithinLimits(),
]
