"""``value``: the numbers the function returns, against exact answers.

Property checks draw inputs with Hypothesis in the grader's process and run each one in
the child; only a submission that fails is shrunk (each shrinking step is another call in
the child), so correct submissions pay for generation once and nothing more.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st

from grader.checks.base import Check, Context
from grader.outcome import Category, Outcome
from grader.observe.session import Returned
from grader.strategies import exact_sum, float32_sum_tolerance

# An oracle gives one number (a scalar answer or tolerance) or an array (element by element).
Oracle = Callable[[np.ndarray], "float | np.ndarray"]
_DRAWN: dict[tuple[int, int, int], list[np.ndarray]] = {}


def format_number(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def format_array(x: np.ndarray, limit: int = 12) -> str:
    def one(v: np.float32) -> str:
        return {"nan": "jnp.nan", "inf": "jnp.inf", "-inf": "-jnp.inf"}.get(str(v), str(v))
    items = [one(v) for v in x.ravel()[:limit]]
    if x.size > limit:
        return f"<float32 array of shape {x.shape} starting [{', '.join(items)}, ...]>"
    flat = f"jnp.array([{', '.join(items)}], dtype=jnp.float32)"
    return flat if x.ndim == 1 else f"{flat}.reshape{tuple(x.shape)}"


def format_value(value: "float | np.ndarray") -> str:
    """An expected answer as a report shows it: a number, or an array."""
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return format_array(value.astype(np.float32), limit=64)
    return format_number(float(value))


def compare_arrays(returned: Returned, expected: np.ndarray, tolerance: "float | np.ndarray") -> str | None:
    """Element by element: the same shape, NaN where the answer is NaN, the same infinities,
    and every finite element within its tolerance."""
    got = returned.array()
    if got is None or got.dtype.kind not in "biuf":
        return f"your function {returned.describe()}, which is not an array of real numbers"
    if got.shape != expected.shape:
        return f"your function returned an array of shape {got.shape}; the answer has shape {expected.shape}"
    got64, want = got.astype(np.float64), expected.astype(np.float64)
    limit = np.broadcast_to(np.asarray(tolerance, np.float64), want.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        good = np.where(np.isnan(want), np.isnan(got64),
                        np.where(np.isinf(want), got64 == want,
                                 np.isfinite(got64) & (np.abs(got64 - want) <= limit)))
    if good.all():
        return None
    wrong = np.argwhere(~good)
    first = tuple(int(i) for i in wrong[0])
    where = first[0] if len(first) == 1 else first
    bound = f" (within {limit[first]:.3g})" if np.isfinite(want[first]) and limit[first] else ""
    return (f"{len(wrong)} of {want.size} elements are wrong; at index {where} your function returned "
            f"{format_number(float(got64[first]))}, the exact answer is {format_number(float(want[first]))}{bound}")


def observed(returned: Returned) -> str:
    """What came back, for the report's "observed" line: the number itself when there is one."""
    number = returned.number() if returned.ok and not returned.incident else None
    described = returned.describe()
    return f"{format_number(number)} ({described.removeprefix('returned ')})" if number is not None else described


def reproduce_call(context: Context, expression: str) -> str:
    return (f"JAX_NUM_CPU_DEVICES={context.devices} python -c \"import numpy as np, jax.numpy as jnp; "
            f"from {context.module} import {context.function} as f; print(repr(f({expression})))\"")


def compare(returned: Returned, expected: "float | np.ndarray", tolerance: "float | np.ndarray") -> str | None:
    """None when the returned number is acceptable, else what is wrong with it."""
    if returned.incident or not returned.ok:
        return f"your function {returned.describe()}"
    if isinstance(expected, np.ndarray) and expected.ndim > 0:
        return compare_arrays(returned, expected, tolerance)
    got = returned.number()
    if got is None:
        return f"your function {returned.describe()}, which is not one number"
    if math.isnan(expected):
        good = math.isnan(got)
    elif math.isinf(expected):
        good = got == expected
    else:
        good = math.isfinite(got) and abs(got - expected) <= tolerance
    if good:
        return None
    bound = f" (a correct float32 sum lies within {tolerance:.3g} of it)" if math.isfinite(expected) and tolerance else ""
    return f"your function returned {format_number(got)}; the exact answer is {format_number(expected)}{bound}"


def _quiet_settings(examples: int, phases: tuple[Phase, ...]) -> settings:
    return settings(max_examples=examples, database=None, deadline=None, phases=phases,
                    suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                    report_multiple_bugs=False, print_blob=False)


@dataclass(frozen=True, kw_only=True)
class ValueProperty(Check):
    """For every input the strategy draws, the function returns ``expected(x)`` within
    ``tolerance(x)``. Deterministic: the seed fixes every input, and no example database."""
    strategy: st.SearchStrategy[np.ndarray]
    expected: Oracle = exact_sum
    tolerance: Oracle = float32_sum_tolerance
    examples: int = 100
    category: ClassVar[Category] = "value"

    def draw(self, run_seed: int) -> list[np.ndarray]:
        """The inputs for ``run_seed``, drawn once per process and reused for every submission."""
        key = (id(self.strategy), run_seed, self.examples)
        if key not in _DRAWN:
            drawn: list[np.ndarray] = []

            @seed(run_seed)
            @_quiet_settings(self.examples, (Phase.generate,))
            @given(self.strategy)
            def record(x: np.ndarray) -> None:
                drawn.append(x)

            record()
            _DRAWN[key] = drawn
        return _DRAWN[key]

    def prepare(self, seed: int) -> None:
        self.draw(seed)

    def problem(self, context: Context, x: np.ndarray) -> tuple[str | None, Returned]:
        returned = context.session.call(x)
        return compare(returned, self.expected(x), self.tolerance(x)), returned

    def judge(self, context: Context) -> Outcome:
        inputs = self.draw(context.seed)
        for x in inputs:
            problem, returned = self.problem(context, x)
            if problem is not None:
                if not returned.incident:
                    x, problem, returned = self.shrink(context, x, problem, returned)
                return Outcome.failed(
                    f"On x = {format_array(x)}, {problem}. (Hypothesis seed {context.seed}.)",
                    expected=format_value(self.expected(x)), observed=observed(returned),
                    counterexample=f"x = {format_array(x, limit=64)}",
                    reproduce=reproduce_call(context, format_array(x, limit=64)), hint_applies=not returned.incident)
        return Outcome.passed(f"Correct on all {len(inputs)} generated inputs (Hypothesis seed {context.seed}).")

    def shrink(self, context: Context, first: np.ndarray, first_problem: str,
               first_returned: Returned) -> tuple[np.ndarray, str, Returned]:
        """Let Hypothesis find a smaller failing input; keep the first one if it cannot."""
        smallest: list[tuple[np.ndarray, str, Returned]] = [(first, first_problem, first_returned)]

        @seed(context.seed)
        @_quiet_settings(self.examples, (Phase.generate, Phase.shrink))
        @given(self.strategy)
        def holds(x: np.ndarray) -> None:
            problem, returned = self.problem(context, x)
            if returned.incident:
                return  # a crash or time-out while shrinking says nothing about this input's value
            if problem is not None:
                smallest.append((x, problem, returned))  # Hypothesis replays the smallest one last
                raise AssertionError(problem)

        try:
            holds()
        except Exception:  # Hypothesis re-raises the shrunk failure: that is the success path
            pass
        return smallest[-1]


@dataclass(frozen=True, kw_only=True)
class Case:
    """One fixed input, written as the Python expression that builds it (so the report can
    show exactly how to reproduce it), with its exact answer when that is not ``expected(x)``."""
    label: str
    code: str
    answer: float | None = None

    def build(self) -> np.ndarray:
        return np.asarray(eval(self.code, {"np": np, "inf": math.inf, "nan": math.nan}), np.float32)


@dataclass(frozen=True, kw_only=True)
class FixedCases(Check):
    """Every listed case returns its exact answer (non-finite answers must match exactly)."""
    cases: tuple[Case, ...] = ()
    expected: Oracle = exact_sum
    tolerance: Oracle = float32_sum_tolerance
    category: ClassVar[Category] = "value"

    def judge(self, context: Context) -> Outcome:
        failures = []
        for case in self.cases:
            x = case.build()
            answer = self.expected(x) if case.answer is None else case.answer
            returned = context.session.call(x)
            finite = bool(np.all(np.isfinite(answer)))  # a non-finite scalar answer must match exactly
            problem = compare(returned, answer, self.tolerance(x) if finite or np.ndim(answer) else 0.0)
            if problem is not None:
                failures.append((case, answer, returned, problem))
        if not failures:
            return Outcome.passed(f"Correct on all {len(self.cases)} special inputs: "
                                  f"{', '.join(c.label for c in self.cases)}.")
        case, answer, returned, problem = failures[0]
        others = f" ({len(failures) - 1} more special input(s) failed too.)" if len(failures) > 1 else ""
        code = f"np.asarray({case.code}, dtype=np.float32)"
        return Outcome.failed(f"On {case.label} (x = {case.code}), {problem}.{others}",
                              expected=format_value(answer), observed=observed(returned),
                              counterexample=f"x = {code}", reproduce=reproduce_call(context, f"jnp.asarray({code})"),
                              hint_applies=not returned.incident)
