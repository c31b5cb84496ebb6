"""``value``: the numbers the function returns, against exact answers.

Property checks draw whole argument dicts with Hypothesis in the grader's process and run
each in the child (an input drawn twice, once); only a submission that fails is shrunk (each
shrinking step with an input not run yet is another call in the child, at most
SHRINK_CALLS of them), so correct submissions pay for generation once and nothing more.
Every size of every declared dimension is drawn first (``Arguments.covering``), so the edges
of the input domain are always tested.

Answers may be pytrees (a number, an array, a dict or tuple of them): returned and expected
values are compared leaf by leaf, by path (``result['w']``), each leaf within its own
tolerance. The walk is ours, not ``chex.assert_trees_all_close`` or ``jax.tree_util``: the
grader's process never imports JAX (it would cost every ``jaxgrade check`` the import, and
forking children from it would be unsafe); the child flattens what came back with
``jax.tree_util`` itself, so both sides name leaves the way JAX does.
"""
from __future__ import annotations

import functools
import hashlib
import math
import multiprocessing.util
import shutil
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import HypothesisException

from grader.arguments import Signature, flatten, literal, short
from grader.checks import drawn_inputs
from grader.checks.base import Check, Context
from grader.errors import ExerciseError
from grader.observe.returned import Leaf, Returned, describe_structure
from grader.outcome import Category, Outcome
from grader.wire import holds_reals
from grader.strategies import Arguments, Named, exact_sum, float32_sum_tolerance

# An oracle takes the arguments by name (``expected(x=..., w=...)``) and gives the exact
# answer: a number, an array, or a dict/tuple of them; a tolerance gives one number for every
# leaf, an array (element by element), or a tree shaped like the answer.
Oracle = Callable[..., Any]
# New inputs a shrink may run in the child (inputs already run are reused free): enough to
# reach a small, readable counterexample, and a bound on what a failing submission costs.
SHRINK_CALLS = 64


class _Once:
    """Values this process computes once and reuses for every submission (a class is graded
    on the same drawn inputs and cases, and an exact sum of 100,000 elements costs ~10 ms of
    the grading process's time each time; oracles are pure). Entries are keyed by the id of
    the object they belong to and hold that object, so an id is never reused while its entry
    lives; the oldest go past ``kept``. Grading threads share it: a thread that needs a value
    another is computing waits for that one (validation draws later seeds while the first
    is graded), and values of other keys are never held up by it."""

    def __init__(self, kept: int = 4096) -> None:
        self._values: dict[tuple[int, Any], tuple[Any, Any]] = {}
        self._making: dict[tuple[int, Any], Any] = {}  # a lock per value being made
        self._kept, self._lock = kept, threading.Lock()

    def get(self, owner: Any, key: Any, make: Callable[[], Any]) -> Any:
        memo = (id(owner), key)
        with self._lock:
            if memo in self._values:
                return self._values[memo][1]
            making = self._making.setdefault(memo, threading.RLock())
        with making:
            with self._lock:
                if memo in self._values:  # made by the thread this one waited for
                    return self._values[memo][1]
            try:
                value = make()
            except BaseException:
                with self._lock:
                    self._making.pop(memo, None)
                raise
            with self._lock:
                if len(self._values) >= self._kept:
                    del self._values[next(iter(self._values))]
                self._values[memo] = (owner, value)
                self._making.pop(memo, None)
            return value


# Separate tables, so the many answers (shrinking adds inputs) never push out a draw or the cases.
_DRAWN, _CASES, _ANSWERS = _Once(), _Once(), _Once()


def format_number(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)


def format_value(value: Any) -> str:
    """An expected answer as a report shows it: a number, an array, or a tree of them."""
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return short(value.astype(np.float32), limit=64)
    if isinstance(value, (Mapping, tuple, list)):
        return "{" + ", ".join(f"{path}: {format_value(leaf)}" for path, leaf in flatten(value, "result")) + "}"
    return format_number(float(value))


def arguments_text(arguments: Mapping[str, Any], limit: int = 12) -> str:
    return ", ".join(f"{name} = {short(value, limit)}" for name, value in arguments.items())


def _compare_leaf(got: Leaf, want: Any, tolerance: Any, path: str) -> str | None:
    """None when the leaf is acceptable, else what is wrong with it."""
    at = "" if path == "result" else f"at {path} "
    of = "" if path == "result" else f" of {path}"
    if isinstance(want, np.ndarray) and want.ndim > 0:
        if got.array is None or not holds_reals(got.array.dtype):
            return f"{at}your function returned {got.describe()}, which is not an array of real numbers"
        if got.array.shape != want.shape:
            return f"{at}your function returned an array of shape {got.array.shape}; the answer has shape {want.shape}"
        got64, want64 = got.array.astype(np.float64), want.astype(np.float64)
        limit = np.broadcast_to(np.asarray(tolerance, np.float64), want64.shape)
        with np.errstate(invalid="ignore", over="ignore"):
            good = np.where(np.isnan(want64), np.isnan(got64),
                            np.where(np.isinf(want64), got64 == want64,
                                     np.isfinite(got64) & (np.abs(got64 - want64) <= limit)))
        if good.all():
            return None
        wrong = np.argwhere(~good)
        first = tuple(int(i) for i in wrong[0])
        index = first[0] if len(first) == 1 else first
        bound = f" (within {limit[first]:.3g})" if np.isfinite(want64[first]) and limit[first] else ""
        return (f"{len(wrong)} of {want64.size} elements{of} are wrong; at index {index} your function "
                f"returned {format_number(float(got64[first]))}, the exact answer is "
                f"{format_number(float(want64[first]))}{bound}")
    number = got.number()
    expected = float(np.asarray(want).reshape(()))
    if number is None:
        return f"{at}your function returned {got.describe()}, which is not one number"
    limit = float(np.asarray(tolerance, np.float64).reshape(-1)[0]) if np.size(tolerance) else 0.0
    if math.isnan(expected):
        good = math.isnan(number)
    elif math.isinf(expected):
        good = number == expected
    else:
        good = math.isfinite(number) and abs(number - expected) <= limit
    if good:
        return None
    bound = f" (a correct float32 result lies within {limit:.3g} of it)" if math.isfinite(expected) and limit else ""
    return f"{at}your function returned {format_number(number)}; the exact answer is {format_number(expected)}{bound}"


def compare(returned: Returned, expected: Any, tolerance: Any) -> str | None:
    """None when every returned leaf is acceptable, else what is wrong (the first problem)."""
    if returned.incident or not returned.ok:
        return f"your function {returned.describe()}"
    wanted = dict(flatten(expected, "result"))
    got = {leaf.path: leaf for leaf in returned.leaves}
    if set(wanted) != set(got):
        return (f"your function returned {describe_structure(returned.leaves)}; the answer is "
                f"{_structure_text(list(wanted))}")
    if isinstance(tolerance, (Mapping, tuple, list)):
        limits = dict(flatten(tolerance, "result"))
    else:
        limits = {path: tolerance for path in wanted}
    for path, want in wanted.items():
        problem = _compare_leaf(got[path], np.asarray(want), limits.get(path, 0.0), path)
        if problem:
            return problem
    return None


def _structure_text(paths: list[str]) -> str:
    if paths == ["result"]:
        return "one value"
    return f"a structure of {len(paths)} values ({', '.join(paths[:8])}{', ...' if len(paths) > 8 else ''})"


def observed(returned: Returned) -> str:
    """What came back, for the report's "observed" line: the number itself when there is one."""
    number = returned.number() if returned.ok and not returned.incident else None
    described = returned.describe()
    return f"{format_number(number)} ({described.removeprefix('returned ')})" if number is not None else described


def reproduce_call(context: Context, arguments: Mapping[str, Any], written: Mapping[str, str] | None = None) -> str:
    """A shell command that shows the failure outside the grader: valid Python, whatever the
    size of the arguments (large arrays travel as their compressed bytes, or as the expression
    ``written`` gives for them)."""
    def expression(name: str) -> str:
        if written and name in written:
            dtype = getattr(context.signature.parameters[name], "dtype", None)
            return f"jnp.asarray(np.asarray({written[name]}, dtype=np.{dtype}))" if dtype else written[name]
        return literal(arguments[name])
    call = ", ".join(expression(name) for name in context.signature.names)
    imports = ["base64", "zlib"] if "zlib." in call else []
    imports += ["numpy as np"] + (["jax"] if "jax." in call else []) + ["jax.numpy as jnp"]
    return (f"JAX_NUM_CPU_DEVICES={context.devices} python -c \"import {', '.join(imports)}; "
            f"from {context.module} import {context.function} as f; print(repr(f({call})))\"")


@functools.cache
def _private_hypothesis_home() -> str:
    """Hypothesis caches what it derives while drawing (the constants it reads from the source
    of loaded modules, a Unicode table) under ``./.hypothesis`` by default: a folder left in a
    student's folder or a CI workspace by every ``jaxgrade check``. This process's own folder
    instead: the cache holds only what is derived again from the sources, so the draws (and the
    reports) stay the same, and it is nowhere a child could plant entries.

    Removed by the process that made it, at its exit, through multiprocessing's finalizers: a
    class run's grading process (forked by a ProcessPoolExecutor, ``grader.batch.processes``)
    leaves by ``os._exit``, past ``atexit`` (where a ``TemporaryDirectory``'s own clean-up
    waits), and makes this folder when it shrinks a failing value check's example; those
    finalizers run there too, and only in the process that registered them, so a folder a
    grading process inherited stays for the grader that made it."""
    storage = tempfile.mkdtemp(prefix="jaxgrade-hypothesis-")
    set_hypothesis_home_dir(storage)
    multiprocessing.util.Finalize(None, shutil.rmtree, args=(storage,), kwargs={"ignore_errors": True},
                                  exitpriority=0)
    return storage


def _quiet_settings(examples: int, phases: tuple[Phase, ...]) -> settings:
    _private_hypothesis_home()
    return settings(max_examples=examples, database=None, deadline=None, phases=phases,
                    suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                    report_multiple_bugs=False, print_blob=False)


def _no_local_constants() -> None:
    """Hypothesis also draws, now and then, constants it reads from the source of every "local"
    module the process has loaded (``providers._get_local_constants``): which modules those are
    differs between a checkout and an installed copy, and with what the process happened to
    import before drawing, so the same seed would draw other inputs. Hypothesis has no setting
    for it (and is pinned, so this internal stays put): the grader's draws see none."""
    from hypothesis.internal.conjecture import providers
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty


_no_local_constants()


def _draw(strategy: st.SearchStrategy[dict[str, Any]], run_seed: int, examples: int) -> list[dict[str, Any]]:
    drawn: list[dict[str, Any]] = []

    @seed(run_seed)
    @_quiet_settings(examples, (Phase.generate,))
    @given(strategy)
    def record(arguments: dict[str, Any]) -> None:
        drawn.append(arguments)

    try:
        record()
    except HypothesisException as error:
        raise ExerciseError(f"the value check's strategy cannot draw inputs: {type(error).__name__}: {error}") from None
    return drawn


def _evaluate(oracle: Oracle, arguments: Mapping[str, Any], what: str) -> Any:
    try:
        return oracle(**arguments)
    except Exception as error:  # the exercise's oracle, not the student: say which and why
        raise ExerciseError(f"the check's {what} failed on {arguments_text(arguments)}: "
                            f"{type(error).__name__}: {error}") from None


def _unread(check_id: str, signature: Signature, *oracles: Oracle) -> list[str]:
    """A library oracle naming a parameter the function does not have (``exact_sum`` reads
    ``x``; ``exact_sum.of("grads")`` reads ``grads``)."""
    return [f"{check_id}: {oracle.name} reads the parameter {name!r}, which {', '.join(signature.names)} does not "
            f"include; use {oracle.name}.of(...) with the parameter it applies to"
            for oracle in oracles if isinstance(oracle, Named) for name in oracle.parameters
            if name not in signature.names]


def answer_on(check: "ValueProperty", arguments: Mapping[str, Any]) -> tuple[Any, Any]:
    """The exact answer and its tolerance on ``arguments`` (any the check's oracle accepts),
    computed once per process."""
    return _answer(check, _input_key(arguments), arguments)


def _answer(check: "ValueProperty", key: str, arguments: Mapping[str, Any]) -> tuple[Any, Any]:
    """The check's ``expected`` and ``tolerance`` on ``arguments`` (whose input key is ``key``)."""
    return _ANSWERS.get(check, key, lambda: (_evaluate(check.expected, arguments, "oracle (expected)"),
                                          _evaluate(check.tolerance, arguments, "tolerance")))


@dataclass(frozen=True, kw_only=True)
class ValueProperty(Check):
    """For every argument dict ``inputs`` draws, the function returns ``expected(**args)``
    within ``tolerance(**args)``. Deterministic: the seed fixes every input, and no example
    database. The first inputs cover every size of every dimension."""
    inputs: Arguments
    expected: Oracle = exact_sum
    tolerance: Oracle = float32_sum_tolerance
    examples: int = 100
    category: ClassVar[Category] = "value"

    def draw(self, run_seed: int) -> list[dict[str, Any]]:
        """The inputs for ``run_seed``, drawn once per process and reused for every submission
        (and kept on disk for the next process: ``grader.checks.drawn_inputs``): one per
        covering assignment of the dimensions first, then random ones."""
        def drawn() -> list[dict[str, Any]]:
            key = drawn_inputs.key_of(repr(self.inputs), run_seed, self.examples)
            kept = drawn_inputs.load(key)
            if kept is not None:
                return kept
            covering = [_draw(strategy, run_seed, 1)[0] for strategy in self.inputs.covering()]
            rest = _draw(self.inputs.strategy(), run_seed, max(self.examples - len(covering), 1))
            made = covering + rest[:max(self.examples - len(covering), 0)]
            drawn_inputs.store(key, made)
            return made

        return _DRAWN.get(self.inputs, (run_seed, self.examples), drawn)

    def prepare(self, seed: int, signature: Signature) -> None:
        for arguments in self.draw(seed):
            try:
                answer_on(self, arguments)
            except ExerciseError:  # the exercise's oracle: the grading that needs it reports it
                pass

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        found = _unread(self.id, signature, self.expected, self.tolerance)
        for arguments in self.draw(0)[:len(self.inputs.dims.covering()) + 3]:
            problem = signature.problem(arguments, "the drawn arguments")
            if problem:
                found.append(f"{self.id}: {problem}")
                break
        return found

    def problem(self, context: Context, arguments: dict[str, Any], key: str) -> tuple[str | None, Returned]:
        returned = context.session.call(arguments)
        return compare(returned, *_answer(self, key, arguments)), returned

    def judge(self, context: Context) -> Outcome:
        inputs = context.draw(self)
        # Every input run so far, by value: an input drawn twice (Hypothesis often draws the
        # empty vector or zeros again) is run once, and the shrink reuses them all.
        known: dict[str, tuple[str | None, Returned]] = {}
        for arguments in inputs:
            key = _input_key(arguments)
            if key not in known:
                known[key] = self.problem(context, arguments, key)
            problem, returned = known[key]
            if problem is not None:
                if not returned.incident and context.shrink:
                    arguments, problem, returned = self.shrink(context, arguments, problem, returned, known)
                expected, _ = _answer(self, _input_key(arguments), arguments)
                return Outcome.failed(
                    f"On {arguments_text(arguments)}, {problem}. (Hypothesis seed {context.seed}.)",
                    expected=format_value(expected), observed=observed(returned),
                    counterexample=arguments_text(arguments, limit=64),
                    reproduce=reproduce_call(context, arguments), hint_applies=not (returned.incident or returned.jax_failed))
        return Outcome.passed(f"Correct on all {len(inputs)} generated inputs (Hypothesis seed {context.seed}).")

    def shrink(self, context: Context, first: dict[str, Any], first_problem: str, first_returned: Returned,
               known: dict[str, tuple[str | None, Returned]] | None = None) -> tuple[dict[str, Any], str, Returned]:
        """Let Hypothesis find a smaller failing input; keep the first one if it cannot.

        Hypothesis starts again from the seed, so its first inputs are the ones ``judge`` ran:
        their outcomes (``known``) are reused, not asked of the child again. Then at most
        SHRINK_CALLS new inputs are run in the child; past that, an input not run yet counts as
        passing, so Hypothesis settles on the smallest failure found so far. A count of calls,
        never a clock: the same submission and seed always shrink to the same input."""
        smallest: list[tuple[dict[str, Any], str, Returned]] = [(first, first_problem, first_returned)]
        known = {} if known is None else known
        calls = 0

        @seed(context.seed)
        @_quiet_settings(self.examples, (Phase.generate, Phase.shrink))
        @given(self.inputs.strategy())
        def holds(arguments: dict[str, Any]) -> None:
            nonlocal calls
            key = _input_key(arguments)
            if key not in known:
                if calls >= SHRINK_CALLS:
                    return
                calls += 1
                known[key] = self.problem(context, arguments, key)
            problem, returned = known[key]
            if returned.incident:
                return  # a crash or time-out while shrinking says nothing about this input's value
            if problem is not None:
                smallest.append((arguments, problem, returned))  # Hypothesis replays the smallest one last
                raise AssertionError(problem)

        try:
            holds()
        except Exception:  # Hypothesis re-raises the shrunk failure: that is the success path
            pass
        return smallest[-1]


def _input_key(arguments: Mapping[str, Any]) -> str:
    """The same key for the same arguments, whichever draw made them (exact bytes, dtypes,
    shapes, Python types): a digest, since every value check call makes one."""
    digest = hashlib.blake2b(digest_size=20)
    _feed(digest, arguments)
    return digest.hexdigest()


def _feed(digest: Any, value: Any) -> None:
    if isinstance(value, np.ndarray):
        digest.update(f"array {value.dtype.str} {value.shape}:".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, Mapping):
        digest.update(f"dict {len(value)}:".encode())
        for name in value:
            digest.update(f"{name!r}=".encode())
            _feed(digest, value[name])
    elif isinstance(value, (tuple, list)):
        digest.update(f"{type(value).__name__} {len(value)}:".encode())
        for item in value:
            _feed(digest, item)
    else:  # None, bool, int, float, a KeySeed: the repr names the type and the exact value
        digest.update(f"{type(value).__name__} {value!r};".encode())


@dataclass(frozen=True, kw_only=True)
class Case:
    """One fixed set of arguments, each written as the Python expression that builds it (so
    the report shows exactly how to reproduce it), with its exact answer when that is not
    ``expected(**args)``. ``code`` maps parameter names to expressions; the values are
    converted to the declared dtype."""
    label: str
    code: Mapping[str, str]
    answer: Any = None

    def build(self, signature: Signature) -> dict[str, Any]:
        names = {"np": np, "inf": math.inf, "nan": math.nan}
        built = {}
        for name in signature.names:
            if name not in self.code:
                raise ExerciseError(f"Case {self.label!r} gives no expression for parameter {name!r}")
            try:
                value = eval(self.code[name], dict(names))
            except Exception as error:
                raise ExerciseError(f"Case {self.label!r}: {name} = {self.code[name]} fails: "
                                    f"{type(error).__name__}: {error}") from None
            spec = signature.parameters[name]
            dtype = getattr(spec, "dtype", None)
            built[name] = np.asarray(value, dtype) if dtype else value
        return built


@dataclass(frozen=True, kw_only=True)
class FixedCases(Check):
    """Every listed case returns its exact answer (non-finite answers must match exactly)."""
    cases: tuple[Case, ...] = ()
    expected: Oracle = exact_sum
    tolerance: Oracle = float32_sum_tolerance
    category: ClassVar[Category] = "value"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        found = _unread(self.id, signature, self.expected, self.tolerance)
        for case in self.cases:
            try:
                problem = signature.problem(case.build(signature), f"case {case.label!r}")
            except ExerciseError as error:
                problem = str(error)
            if problem:
                found.append(f"{self.id}: {problem}")
        return found

    def prepare(self, seed: int, signature: Signature) -> None:
        try:
            self.answered(signature)
        except ExerciseError:  # a case or the oracle that fails: the grading reports it
            pass

    def answered(self, signature: Signature) -> list[tuple[Case, dict[str, Any], Any, Any]]:
        """Each case with its arguments, answer and tolerance, computed once per process (every
        submission is graded on the same cases)."""
        def answered() -> list[tuple[Case, dict[str, Any], Any, Any]]:
            found = []
            for case in self.cases:
                arguments = case.build(signature)
                answer = (_evaluate(self.expected, arguments, "oracle (expected)") if case.answer is None
                          else case.answer)
                finite = all(np.all(np.isfinite(np.asarray(leaf))) for _, leaf in flatten(answer))
                tolerance = _evaluate(self.tolerance, arguments, "tolerance") if finite or np.ndim(answer) else 0.0
                found.append((case, arguments, answer, tolerance))
            return found

        return _CASES.get(self, None, answered)

    def judge(self, context: Context) -> Outcome:
        failures = []
        for case, arguments, answer, tolerance in self.answered(context.signature):
            returned = context.session.call(arguments)
            problem = compare(returned, answer, tolerance)
            if problem is not None:
                failures.append((case, arguments, answer, returned, problem))
        if not failures:
            return Outcome.passed(f"Correct on all {len(self.cases)} special inputs: "
                                  f"{', '.join(c.label for c in self.cases)}.")
        case, arguments, answer, returned, problem = failures[0]
        others = f" ({len(failures) - 1} more special input(s) failed too.)" if len(failures) > 1 else ""
        written = ", ".join(f"{name} = {code}" for name, code in case.code.items())
        return Outcome.failed(f"On {case.label} ({written}), {problem}.{others}",
                              expected=format_value(answer), observed=observed(returned),
                              counterexample=written, reproduce=reproduce_call(context, arguments, case.code),
                              hint_applies=not (returned.incident or returned.jax_failed))
