"""Checks for mixed_precision_matmul, built from the grader's check library.

The task: round both float32 operands to bfloat16 and multiply them with float32 accumulation
(``preferred_element_type=jnp.float32``). Values are judged against the exact product of the
bfloat16-rounded operands, on inputs built so that every way of rounding at the wrong place
gives a different number (see ``rounding_visible``). Structure is judged on the program the probe
call ran: the product's operands are bfloat16 values computed from x and from w, the product
accumulates in float32, nothing after it rounds the result, and no rounding is emulated with
``jax.lax.reduce_precision``. A value's dtype is followed through the program from the
arguments (float32) and each ``convert_element_type``'s ``new_dtype``: the program the grader
keeps holds each value's shape, not its dtype (see ``dtype_of``).
"""
import math
from typing import Any

import numpy as np
from hypothesis import strategies as st

from grader.authoring import (Array, AvoidsPrimitives, Case, FixedCases, FLOAT32, LoadsFunction, Observed, Outcome,
                              Predicate, Returns, Signature, UsesPrimitive, ValueProperty, WithinLimits, arguments,
                              shapes)
from grader.strategies import ArrayOf

SIGNATURE = Signature({"x": Array("float32", "n k"), "w": Array("float32", "k m")}, returns=Array("float32", "n m"))


def to_bfloat16(a: np.ndarray) -> np.ndarray:
    """Each float32 element rounded to the nearest bfloat16 (ties to even), as float32: what
    ``x.astype(jnp.bfloat16)`` keeps of it. bfloat16 is float32 with the low 16 bits of the
    significand dropped."""
    bits = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    kept = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return kept.astype(np.uint32).view(np.float32).reshape(np.shape(a))


def rounded_product(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The exact product of the bfloat16-rounded operands (float64 products of bfloat16 values
    are exact, and ``math.fsum`` adds them exactly)."""
    xb, wb = to_bfloat16(x).astype(np.float64), to_bfloat16(w).astype(np.float64)
    out = np.zeros((xb.shape[0], wb.shape[1]))
    for i in range(xb.shape[0]):
        for j in range(wb.shape[1]):
            out[i, j] = math.fsum((xb[i] * wb[:, j]).tolist())
    return out


def float32_accumulation_tolerance(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A product of two bfloat16 values (8 significant bits each) is exact in float32; the k - 1
    float32 additions each round by at most eps times the magnitude |xb| @ |wb| (k + 1 of them
    allowed, as float32_matmul_tolerance), plus the smallest normal number per addition (XLA
    flushes subnormal results)."""
    k = x.shape[1]
    magnitude = np.abs(to_bfloat16(x).astype(np.float64)) @ np.abs(to_bfloat16(w).astype(np.float64))
    return (k + 1) * (float(FLOAT32.eps) * magnitude + float(FLOAT32.tiny))


def rounding_visible() -> st.SearchStrategy[float]:
    """float32 values ±(m + f)·2^e with m an odd integer in [129, 255], f in {1/8, 1/4, 3/8} and
    e in [-12, 12] (and some zeros): exact in float32, and rounded to bfloat16 (8 significant
    bits) each becomes exactly ±m·2^e, 1/8 to 3/8 of a bfloat16 step away. So

    - not rounding an operand (float32 throughout, or one operand cast) moves every product
      by f/m >= 2^-11 of itself: where k = 1, 2^11 times the tolerance;
    - rounding the result instead of the operands cannot give the right answer where k = 1:
      the right entry m1·m2·2^(e1+e2) is an odd multiple of 2^(e1+e2) with 15 or 16 significant
      bits, which no bfloat16 holds, so a bfloat16 result (rounded product or bfloat16
      accumulation) is at least 2^(e1+e2), 2^-16 of it or more, away: 2^6 times the tolerance;
    - float16 (11 significant bits) keeps the fraction f, and overflows beyond 65504.

    Magnitudes lie in [0.03, 1.1e6]: the sums of up to 16 products stay far from float32's limits,
    and nothing is subnormal."""
    nonzero = st.builds(lambda sign, mantissa, fraction, exponent: sign * (mantissa + fraction) * 2.0 ** exponent,
                        st.sampled_from((1.0, -1.0)), st.integers(64, 127).map(lambda m: 2 * m + 1),
                        st.sampled_from((0.125, 0.25, 0.375)), st.integers(-12, 12))
    return st.one_of(nonzero, st.just(0.0))


def visible_array(shape: str) -> ArrayOf:
    return ArrayOf(tuple(shape.split()), "float32", rounding_visible())


# Every dimension may be 0; k = 1 (a single product per entry) is where a rounded result shows
# whatever the signs; the last two are ordinary shapes.
INPUTS = arguments(shapes("n k m", (0, 3, 2), (3, 0, 2), (4, 1, 3), (3, 2, 0), (5, 4, 3), (8, 16, 6)),
                   x=visible_array("n k"), w=visible_array("k m"))

# Distinct values of the same family (none a bfloat16), rows and columns of different counts.
PROBE = {"x": ((np.arange(24, dtype=np.float32).reshape(6, 4) * 2 + 129 + 0.25) * np.float32(0.125)
               * np.where(np.arange(24).reshape(6, 4) % 3 == 0, -1, 1).astype(np.float32)),
         "w": (np.arange(20, dtype=np.float32).reshape(4, 5) * 2 + 131 + 0.375) * np.float32(0.0625)}

# -- following dtypes through the program ---------------------------------------------------------
NARROWER = ("bfloat16", "float16", "float8_e4m3fn", "float8_e5m2")
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "is_finite")


def _producer(seen: Observed, value: int) -> Any:
    return next((n for n in seen.program.nodes if value in n.outputs and not n.inlined), None)


def dtype_of(seen: Observed, value: int | None, depth: int = 0) -> str | None:
    """The dtype of a value of the program (None when it cannot be told): the arguments are
    float32; a convert gives its new_dtype, a dot_general its preferred_element_type, a comparison
    bool; every other operation keeps the dtype of the first value it reads whose dtype can be
    told (a select, of the values it selects; a literal's is never asked)."""
    if value is None or depth > 200:
        return None
    if value in seen.program.inputs:
        return "float32"
    node = _producer(seen, value)
    if node is None:
        return None
    if node.primitive == "convert_element_type":
        return node.params.get("new_dtype")
    if node.primitive in COMPARISONS:
        return "bool"
    if node.primitive == "dot_general" and node.params.get("preferred_element_type"):
        return node.params["preferred_element_type"]
    reads = [i for i in (node.inputs[1:] if node.primitive == "select_n" else node.inputs) if i is not None]
    return next((d for d in (dtype_of(seen, i, depth + 1) for i in reads) if d is not None), None)


def _products(seen: Observed) -> list[Any]:
    """The matrix products whose output the function's result is computed from."""
    return [n for n in seen.program.uses("dot_general")
            if any(seen.program.feeds(o) for o in n.outputs if o is not None)]


def _argument(seen: Observed, name: str) -> int:
    return next(i for p, i in zip(seen.program.input_paths, seen.program.inputs) if p == name)


def operand_in_bfloat16(name: str):
    """The predicate: a product feeding the result multiplies a bfloat16 value computed from
    the argument ``name``."""
    def predicate(seen: Observed) -> "bool | Outcome":
        want = f"a matrix product whose operand computed from {name} is bfloat16"
        products = _products(seen)
        if not products:
            return Outcome.failed("No matrix product (dot_general: x @ w, jnp.matmul, jnp.einsum, jax.lax.dot) "
                                  "computes your result.", expected=want, observed="no dot_general feeding the result")
        reached = seen.program.derived_from([_argument(seen, name)])
        found = []
        for node in products:
            for value in node.inputs:
                if value is not None and value in reached:
                    found.append(dtype_of(seen, value))
        if "bfloat16" in found:
            return True
        if not found:
            return Outcome.failed(f"No operand of your matrix product is computed from {name} in JAX (was it "
                                  "rounded on the host, in NumPy?): the product never sees a bfloat16 copy of it.",
                                  expected=want, observed=f"no operand of the product computed from {name}")
        seen_as = ", ".join(sorted({d or "an unknown dtype" for d in found}))
        return Outcome.failed(f"Your matrix product reads {name} as {seen_as}, not bfloat16: cast {name} with "
                              f"{name}.astype(jnp.bfloat16) and give that to the product itself (rounding it and "
                              "casting it back to float32 multiplies in float32).",
                              expected=want, observed=f"the product's operand from {name} is {seen_as}")
    predicate.__name__ = f"{name}_in_bfloat16"
    return predicate


def result_not_rounded(seen: Observed) -> "bool | Outcome":
    """No cast to a narrower dtype than float32 between the product and the result."""
    want = "no cast to bfloat16 (or narrower) of the product on its way to the result"
    products = _products(seen)
    after = seen.program.derived_from([o for n in products for o in n.outputs if o is not None])
    casts = [n for n in seen.program.uses("convert_element_type")
             if n.params.get("new_dtype") in NARROWER and after.intersection(i for i in n.inputs if i is not None)
             and any(seen.program.feeds(o) for o in n.outputs if o is not None)]
    if casts:
        dtypes = ", ".join(sorted({str(n.params.get("new_dtype")) for n in casts}))
        return Outcome.failed(f"Your program casts the product to {dtypes} on its way to the result: that rounds the "
                              "float32 sums the accumulation kept. Round the operands, not the result.",
                              expected=want, observed=f"{len(casts)} cast{'s' * (len(casts) > 1)} of the product to "
                                                      f"{dtypes}")
    return True


CHECKS = [
    LoadsFunction(),  # "The file loads and defines mixed_precision_matmul(x, w)"
    Returns(id="type.float32_product", title="Returns a float32 JAX array of shape (n, m)",
            hint="preferred_element_type=jnp.float32 makes the product float32 (without it, bfloat16 operands give "
                 "a bfloat16 product)."),
    ValueProperty(id="value.rounded_operands",
                  title="Equals the exact product of the bfloat16-rounded operands (Hypothesis)",
                  inputs=INPUTS, expected=rounded_product, tolerance=float32_accumulation_tolerance,
                  hint="Round x and w to bfloat16, then multiply with float32 accumulation: rounding the result "
                       "instead, or only one operand, or float16, gives other numbers."),
    FixedCases(id="value.one_product", title="Rounds the operands, not the product: [[1.25 + 2^-9]] @ [[3 + 2^-8]]",
               cases=(Case(label="one product", code={"x": "np.array([[1.25 + 2.0**-9]])",
                                                      "w": "np.array([[3.0 + 2.0**-8]])"}),),
               expected=rounded_product, tolerance=float32_accumulation_tolerance,
               hint="bfloat16 keeps 1.25 and 3.0 of these: the answer is 3.75, exactly. The float32 product is "
                    "3.76075 (3.75 only if both operands are rounded), and that rounded to bfloat16 is 3.765625."),
    Predicate(operand_in_bfloat16("x"), "the product reads x as bfloat16", id="structure.x_bfloat16",
              hint="x.astype(jnp.bfloat16), given to the product as it is."),
    Predicate(operand_in_bfloat16("w"), "the product reads w as bfloat16", id="structure.w_bfloat16",
              hint="w.astype(jnp.bfloat16) as well: casting one operand leaves the other float32."),
    UsesPrimitive(id="structure.float32_accumulation", title="The product accumulates in float32",
                  operation="dot_general", params={"preferred_element_type": "float32"},
                  hint="jnp.matmul(xb, wb, preferred_element_type=jnp.float32) (or jnp.dot, jnp.einsum, "
                       "jax.lax.dot_general with it): without it the sums of bfloat16 products are bfloat16."),
    Predicate(result_not_rounded, "the product is not cast to bfloat16 or narrower on its way to the result",
              id="structure.result_not_cast",
              hint="Return the float32 product as it is: casting it to bfloat16 (and back) throws away what the "
                   "float32 accumulation kept."),
    AvoidsPrimitives(id="structure.no_emulated_rounding", title="No rounding emulated with reduce_precision",
                     operations=("reduce_precision",),
                     why="jax.lax.reduce_precision rounds float32 values as bfloat16 would and keeps them float32: "
                         "the product then runs in float32 on float32 operands, which is not mixed precision."),
    WithinLimits(),
]
