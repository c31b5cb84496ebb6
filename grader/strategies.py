"""Hypothesis strategies for exercise inputs, and the exact answers they are judged against.

Strategies are values an exercise composes, in the style of ``hypothesis.extra.numpy``:

    INPUTS = arguments(
        dims(n=(0, 8, 16), k=(0, 1, 3), m=(1, 4)),       # the sizes each dimension may take
        x=float32_array("n k", bound=1e15),              # shapes name dimensions, so
        w=float32_array("k m", bound=1e15),              # w's first dimension is x's second
    )

A value check draws from ``INPUTS`` under a fixed seed. Each dimension takes its sizes from a
small fixed set, because every new shape costs the child a JAX compilation; and every size
of every dimension is drawn at least once (:meth:`Arguments.covering`), so the edges of the
declared domain (an empty axis, one row, one column) are always tested, never left to chance.
Pytrees of parameters are dicts and tuples of these pieces (``tree``).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.arguments import KeySeed
from grader.errors import ExerciseError

# Empty, one element, the smallest even and odd sums, a medium odd length and a long one.
# Each length costs every submission a trace and lowering in its child (15-60 ms even with
# the compilation cache): six, not nine, made class grading 14% cheaper in CPU.
LENGTHS = (0, 1, 2, 3, 7, 64)
FLOAT32 = np.finfo(np.float32)


def float32_bound(bound: float) -> float:
    """``bound`` as the float32 Hypothesis needs it (exactly representable), or an
    ExerciseError that says why it cannot be one."""
    if not (isinstance(bound, (int, float)) and math.isfinite(bound) and bound > 0):
        raise ExerciseError(f"bound={bound!r}: give a positive finite number")
    if bound > float(FLOAT32.max):
        raise ExerciseError(f"bound={bound:g} is not representable in float32 (the largest float32 is "
                            f"{float(FLOAT32.max):.4g}); choose a bound the exact answers cannot overflow with")
    return float(np.float32(bound)) if float(np.float32(bound)) <= bound else float(np.nextafter(np.float32(bound), 0))


def float32_elements(bound: float = 1e30, allow_nonfinite: bool = False) -> st.SearchStrategy[float]:
    """float32 values in [-bound, bound] mixing signs and magnitudes (and NaN and ±inf with
    ``allow_nonfinite``, for tasks whose statement allows them). No subnormals: XLA's CPU
    backend flushes them to zero on input, so a product with one would test XLA, not the
    student (a sum's tolerance covers them, a product's cannot)."""
    limit = float32_bound(bound)
    if allow_nonfinite:
        return st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=False)
    return st.floats(min_value=-limit, max_value=limit, width=32, allow_nan=False, allow_infinity=False,
                     allow_subnormal=False)


@dataclass(frozen=True)
class Dims:
    """The sizes the named dimensions may take together: ``assignments`` is the declared
    domain (each a dict of sizes), ``first`` the assignments every value check draws before
    any random one (every edge of the domain)."""
    assignments: tuple[Mapping[str, int], ...]
    first: tuple[Mapping[str, int], ...] = ()

    def strategy(self) -> st.SearchStrategy[dict[str, int]]:
        return st.sampled_from(self.assignments).map(dict) if self.assignments else st.just({})

    def covering(self) -> list[dict[str, int]]:
        return [dict(a) for a in self.first]


def _sizes(name: str, values: Any) -> tuple[int, ...]:
    values = tuple(values)
    if not values or any(not isinstance(s, int) or isinstance(s, bool) or s < 0 for s in values):
        raise ExerciseError(f"dims({name}=...): give one or more sizes, each an int >= 0, not {values!r}")
    return values


def dims(**sizes: "tuple[int, ...] | range | list[int]") -> Dims:
    """Dimensions that vary independently: ``dims(n=(0, 8, 16), k=range(0, 4))``. Every size of
    every dimension is drawn first, in as few assignments as the longest list of sizes."""
    named = {name: _sizes(name, values) for name, values in sizes.items()}
    product = [dict(zip(named, combo)) for combo in itertools.product(*named.values())]
    longest = max((len(v) for v in named.values()), default=0)
    first = [{name: values[i % len(values)] for name, values in named.items()} for i in range(longest)]
    return Dims(tuple(product), tuple(first))


def shapes(names: str, *choices: tuple[int, ...]) -> Dims:
    """Dimensions that vary together, as a short list of combinations (each costs every
    submission a compilation): ``shapes("r c", (0, 4), (8, 0), (8, 1), (16, 5))``. Every
    combination is drawn first: list the edges of the domain (empty axes, one row, one column)."""
    keys = names.replace(",", " ").split()
    for choice in choices:
        if len(choice) != len(keys):
            raise ExerciseError(f"shapes({names!r}, ...): {choice} does not give one size per name")
        _sizes(names, choice)
    assignments = tuple(dict(zip(keys, choice)) for choice in choices)
    return Dims(assignments, assignments)


@dataclass(frozen=True)
class ArrayOf:
    """Arrays of a symbolic shape (sizes and dimension names) with elements from a strategy."""
    shape: tuple[int | str, ...]
    dtype: str
    elements: st.SearchStrategy[Any]

    def strategy(self, sizes: Mapping[str, int]) -> st.SearchStrategy[np.ndarray]:
        try:
            shape = tuple(e if isinstance(e, int) else sizes[e] for e in self.shape)
        except KeyError as missing:
            raise ExerciseError(f"an array of shape {self.shape} names dimension {missing}, which dims(...) "
                                "does not declare") from None
        return hnp.arrays(np.dtype(self.dtype), shape, elements=self.elements)


def _shape(shape: "str | tuple[int | str, ...]") -> tuple[int | str, ...]:
    return tuple(shape.replace(",", " ").split()) if isinstance(shape, str) else tuple(shape)


def float32_array(shape: "str | tuple[int | str, ...]", bound: float = 1e30,
                  allow_nonfinite: bool = False) -> ArrayOf:
    """float32 arrays of ``shape`` (``"n k"``: dimensions from ``dims``) in [-bound, bound]."""
    return ArrayOf(_shape(shape), "float32", float32_elements(bound, allow_nonfinite))


def int_array(shape: "str | tuple[int | str, ...]", low: int = -100, high: int = 100, dtype: str = "int32") -> ArrayOf:
    return ArrayOf(_shape(shape), dtype, st.integers(low, high))


def keys() -> st.SearchStrategy[KeySeed]:
    """Seeds of ``jax.random.key`` for a :class:`grader.arguments.Key` parameter."""
    return st.integers(0, 2**31 - 1).map(KeySeed)


Part = Any  # ArrayOf | SearchStrategy | a dict or tuple of parts


def _part_strategy(part: Part, sizes: Mapping[str, int]) -> st.SearchStrategy[Any]:
    if isinstance(part, ArrayOf):
        return part.strategy(sizes)
    if isinstance(part, st.SearchStrategy):
        return part
    if isinstance(part, Mapping):
        return st.fixed_dictionaries({k: _part_strategy(v, sizes) for k, v in part.items()})
    if isinstance(part, tuple):
        return st.tuples(*(_part_strategy(v, sizes) for v in part))
    raise ExerciseError(f"arguments(...): {part!r} is not an array (float32_array(...)), a strategy, "
                        "or a dict/tuple of them")


@dataclass(frozen=True)
class Arguments:
    """Whole argument dicts ``{parameter: value}``: dimensions drawn first, then every part
    with those sizes (so related shapes always agree)."""
    dims: Dims
    parts: Mapping[str, Part] = field(default_factory=dict)
    # the parts' strategy for each set of sizes, made on first use (see _parts)
    _made: dict[tuple[tuple[str, int], ...], st.SearchStrategy[dict[str, Any]]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def strategy(self, sizes: Mapping[str, int] | None = None) -> st.SearchStrategy[dict[str, Any]]:
        """Arguments with dimensions drawn from the domain, or fixed to ``sizes``."""
        chosen = st.just(dict(sizes)) if sizes is not None else self.dims.strategy()
        return chosen.flatmap(self._parts)

    def _parts(self, sizes: Mapping[str, int]) -> st.SearchStrategy[dict[str, Any]]:
        """The parts' strategy for these sizes, made once: every input tried (shrinking
        included) is a draw, and making ``hnp.arrays`` anew each time was a fifth of its cost."""
        key = tuple(sorted(sizes.items()))
        if key not in self._made:
            self._made[key] = st.fixed_dictionaries({name: _part_strategy(part, sizes)
                                                     for name, part in self.parts.items()})
        return self._made[key]

    def covering(self) -> list[st.SearchStrategy[dict[str, Any]]]:
        """One strategy per assignment of ``Dims.covering``: drawn first by value checks."""
        return [self.strategy(sizes) for sizes in self.dims.covering()]


def arguments(dims: Dims | None = None, **parts: Part) -> Arguments:
    """The inputs of a value check, one part per parameter (see the module docstring)."""
    return Arguments(dims or Dims(({},)), parts)


def tree(**parts: Part) -> dict[str, Part]:
    """A dict pytree of parts (``params=tree(dense=tree(kernel=float32_array("k m"), ...))``)."""
    return dict(parts)


# -- exact answers and the tolerance of a correct float32 computation ---------------------------
@dataclass(frozen=True)
class Named:
    """A library oracle or tolerance, applied to the parameters it names. A value check calls
    it with every argument by name (``expected(**arguments)``); it reads only its own
    ``parameters`` (``x`` unless renamed), so it serves a function with other parameters too
    (a learning rate beside ``x``). ``.of("grads")`` is the same oracle on another parameter;
    called positionally (``exact_sum(array)``) it is the plain function."""
    function: Callable[..., Any]
    parameters: tuple[str, ...] = ("x",)

    def __call__(self, *values: Any, **arguments: Any) -> Any:
        if values:
            return self.function(*values)
        missing = [p for p in self.parameters if p not in arguments]
        if missing:
            raise ExerciseError(f"{self.name} reads the parameter {missing[0]!r}, which the function does not have "
                                f"(its parameters: {', '.join(arguments)}); name the one it applies to: "
                                f"{self.name}.of({', '.join(repr(a) for a in list(arguments)[:len(self.parameters)])})")
        return self.function(*(arguments[p] for p in self.parameters))

    def of(self, *parameters: str) -> "Named":
        if len(parameters) != len(self.parameters):
            raise ExerciseError(f"{self.name}.of(...) takes {len(self.parameters)} parameter name(s), "
                                f"got {len(parameters)}")
        return Named(self.function, tuple(parameters))

    @property
    def name(self) -> str:
        return getattr(self.function, "__name__", "the oracle")


def named(*parameters: str) -> Callable[[Callable[..., Any]], Named]:
    """Make a library function an oracle applied to ``parameters`` by name (see ``Named``)."""
    return lambda function: Named(function, parameters)


@named("x")
def exact_sum(x: np.ndarray) -> float:
    """The correctly rounded sum of the float32 elements, computed exactly in float64."""
    return math.fsum(np.asarray(x, np.float64).ravel().tolist())


@named("x")
def float32_sum_tolerance(x: np.ndarray) -> float:
    """How far a correct float32 sum may stray from the exact one: each of the n additions
    may round by eps·Σ|x|, and XLA's CPU backend flushes subnormals (< tiny each)."""
    n = x.size
    magnitude = math.fsum(np.abs(np.asarray(x, np.float64)).ravel().tolist())
    return n * (float(FLOAT32.eps) * magnitude + float(FLOAT32.tiny))


@named("x")
def exactly(x: np.ndarray) -> np.ndarray:
    """x itself: the answer of a task that only moves data (placing changes no value)."""
    return np.asarray(x, np.float32)


def no_tolerance(**_: Any) -> float:
    """Moving or placing data must not change a single bit."""
    return 0.0


def exact_axis_sum(axis: int, of: str = "x") -> Named:
    """Sums of parameter ``of`` along ``axis``, each correctly rounded (float64 fsum of the float32 elements)."""
    def exact_axis_sum(x: np.ndarray) -> np.ndarray:
        moved = np.moveaxis(np.asarray(x, np.float64), axis, -1)
        flat = moved.reshape(-1, moved.shape[-1]) if moved.size else np.zeros((int(np.prod(moved.shape[:-1])), 0))
        return np.array([math.fsum(row.tolist()) for row in flat], np.float64).reshape(moved.shape[:-1])
    return Named(exact_axis_sum, (of,))


def float32_axis_sum_tolerance(axis: int, of: str = "x") -> Named:
    """``float32_sum_tolerance`` for each of the sums of parameter ``of`` along ``axis``."""
    def float32_axis_sum_tolerance(x: np.ndarray) -> np.ndarray:
        n = x.shape[axis]
        magnitude = np.sum(np.abs(np.asarray(x, np.float64)), axis=axis)
        return n * (float(FLOAT32.eps) * magnitude + float(FLOAT32.tiny))
    return Named(float32_axis_sum_tolerance, (of,))


def elementwise_tolerance(expected: Callable[..., np.ndarray], ulps: float = 1.0) -> Callable[..., np.ndarray]:
    """For one float32 rounding per element: ``ulps`` float32 epsilons of the exact answer,
    plus the smallest normal number (XLA flushes subnormal results to zero)."""
    def tolerance(**arguments: Any) -> np.ndarray:
        return ulps * float(FLOAT32.eps) * np.abs(expected(**arguments)) + float(FLOAT32.tiny)
    return tolerance


@named("x", "w")
def exact_matmul(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x @ w with every entry correctly rounded: float64 products of float32 values are exact,
    and ``math.fsum`` adds them exactly."""
    x64, w64 = np.asarray(x, np.float64), np.asarray(w, np.float64)
    out = np.zeros((x64.shape[0], w64.shape[1]))
    for i in range(x64.shape[0]):
        for j in range(w64.shape[1]):
            out[i, j] = math.fsum((x64[i] * w64[:, j]).tolist())
    return out


@named("x", "w")
def float32_matmul_tolerance(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each entry of x @ w is a float32 dot product of length k: every product rounds once
    and every addition once, so k+1 roundings of the magnitude |x| @ |w|."""
    k = x.shape[1]
    magnitude = np.abs(np.asarray(x, np.float64)) @ np.abs(np.asarray(w, np.float64))
    return (k + 1) * (float(FLOAT32.eps) * magnitude + float(FLOAT32.tiny))
