"""Checks for scan_not_loop, built from the grader's check library.

The recurrence h = a * h + x over a sequence, as one jax.lax.scan: its program keeps one copy of
the step whatever the sequence's length, where a Python loop (eager, or unrolled while jax.jit
traces it) holds one per element. Values are judged against the exact recurrence in float64
within the error of float32 arithmetic, bounded step by step."""
import numpy as np
from hypothesis import strategies as st

from grader.authoring import (FLOAT32, AnyOf, Array, LoadsFunction, LoopLength, OperationCount, Returns, Scalar, Signature,
                              UsesPrimitive, ValueProperty, WhileReads, WithinLimits, arguments, dims, float32_array)

SIGNATURE = Signature({"xs": Array("float32", "t"), "a": Scalar("float")}, returns=Array("float32", ()))

# Distinct values, a length no value test uses.
PROBE = {"xs": np.array([1.5, -2.0, 0.25, 4.0, -0.75, 3.0, 0.5, -1.25, 2.5], np.float32), "a": 0.75}


def exact(xs: np.ndarray, a: float) -> float:
    """h_t = a h_(t-1) + x_t from h = 0, in float64, with a as the float32 it is in the program."""
    a, h = float(np.float32(a)), 0.0
    for x in xs.astype(np.float64):
        h = a * h + x
    return h


def tolerance(xs: np.ndarray, a: float) -> float:
    """Each step rounds twice (the product, the sum), each by at most eps times the magnitude
    it rounds; with |a| < 1 an earlier error shrinks as it is carried, so the sum of the steps'
    magnitudes bounds the whole: 2 eps Σ_t M_t, with M_t = |a| M_(t-1) + |x_t|, plus tiny per step."""
    a, bound, total = abs(float(np.float32(a))), 0.0, 0.0
    for x in np.abs(xs.astype(np.float64)):
        bound = a * bound + x
        total += bound
    return 2 * float(FLOAT32.eps) * total + len(xs) * float(FLOAT32.tiny)


CHECKS = [
    LoadsFunction(),
    Returns(id="type.scalar", title="Returns a float32 JAX array of shape ()",
            hint="Return the final carry of the scan, not the stacked outputs."),
    ValueProperty(id="value.random_sequences", title="Computes the recurrence on random sequences (Hypothesis)",
                  inputs=arguments(dims(t=(0, 1, 2, 5, 16, 33)), xs=float32_array("t", bound=1e6),
                                   a=st.floats(-0.9375, 0.9375, allow_nan=False, width=32)),
                  expected=exact, tolerance=tolerance,
                  hint="Start from h = 0, then h = a * h + x for each x in order; return the last h."),
    # Two routes to one loop JAX sees: a scan (jax.lax.fori_loop with Python bounds is one too), or a
    # while loop (jax.lax.while_loop, or a fori_loop whose bounds are traced, which JAX cannot make a scan)
    AnyOf(UsesPrimitive(id="structure.uses_loop.scan", title="a jax.lax.scan", operation="scan"),
          UsesPrimitive(id="structure.uses_loop.while", title="a jax.lax.while_loop", operation="while"),
          id="structure.uses_loop", title="The recurrence is one loop JAX sees (a scan or a while loop)",
          description="run the recurrence as one loop JAX sees",
          hint="jax.lax.scan(step, 0.0, xs) with step(h, x) returning (a * h + x, None)."),
    # at_most: a scan's program is a few operations whatever the length (the variants: 4 to 11); a
    # Python loop unrolled over a fixed padded length never grows with the input, yet is hundreds
    OperationCount(id="structure.does_not_grow", title="The program does not grow with the sequence",
                   grows_with={"xs": 0}, at_most=32,
                   hint="A Python for loop over xs runs (and traces) its body once per element: the program "
                        "then grows with the sequence. A scan holds the body once."),
    # The loop over xs itself, one step per element: a scan of xs's length (and twice that on an
    # xs twice as long), or a while loop reading xs as it is; a loop over xs padded to a fixed
    # length runs the padding's steps and fails both
    AnyOf(LoopLength(id="structure.loop_reads_xs.scan", title="a scan of xs's length reading xs", of=("xs", 0),
                     reads="xs"),
          WhileReads(id="structure.loop_reads_xs.while", title="a while loop reading xs as it is", reads="xs"),
          id="structure.loop_reads_xs", title="The loop runs over xs itself, one step per element",
          description="loop over xs itself, one step per element",
          hint="The loop itself must do the work on xs, one step per element: scan over xs (its leading axis), "
               "not over a placeholder after computing the answer elsewhere, nor over xs padded to a fixed length."),
    WithinLimits(),
]
