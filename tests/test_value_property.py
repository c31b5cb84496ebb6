"""grader.checks.values.ValueProperty: how a failing value check shrinks, with the function run
in-process (a stand-in for the child), so every call can be counted."""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Callable

import numpy as np
import pytest

from grader.arguments import Array, Signature, encode
from grader.checks import ValueProperty, values
from grader.checks.base import Context
from grader.observe.returned import Leaf, Returned
from grader.strategies import LENGTHS, arguments, dims, float32_array

SIGNATURE = Signature({"x": Array("float32", "n")}, returns=Array("float32", ()))


class InProcess:
    """The session's ``call``, answered by a NumPy function; every call is kept."""

    def __init__(self, function: Callable[[np.ndarray], float]) -> None:
        self.function = function
        self.called: list[str] = []  # each call's arguments, as exact bytes
        self.inputs: list[np.ndarray] = []
        self.cache: dict[str, Any] = {}

    def call(self, arguments: dict[str, Any]) -> Returned:
        self.called.append(json.dumps(encode(arguments), sort_keys=True))
        self.inputs.append(arguments["x"])
        value = np.asarray(self.function(arguments["x"]), np.float32)
        return Returned(True, leaves=(Leaf("result", "jax_array", "jaxlib.Array", "float32", (), value),))


def judged(function: Callable[[np.ndarray], float], seed: int = 0) -> tuple[Any, InProcess]:
    check = ValueProperty(id="value.sum", title="sums", inputs=arguments(dims(n=LENGTHS), x=float32_array("n")))
    session = InProcess(function)
    context = Context(session, SIGNATURE, {}, seed, "f", "submission", 8)  # type: ignore[arg-type]
    return check.judge(context), session


def skips_first(x: np.ndarray) -> float:
    return float(np.sum(x[1:], dtype=np.float64))


def wrong_above_half(x: np.ndarray) -> float:
    """Wrong only for elements above 0.5: Hypothesis needs many steps to shrink towards it."""
    return float(np.sum(np.where(x > 0.5, 0.0, x), dtype=np.float64))


def test_shrinking_never_runs_an_input_twice():
    outcome, session = judged(skips_first)
    assert outcome.status == "failed" and outcome.counterexample.count(",") == 1  # one element: [v]
    assert len(session.called) == len(set(session.called))


def test_shrinking_runs_at_most_shrink_calls_new_inputs(monkeypatch):
    monkeypatch.setattr(values, "SHRINK_CALLS", 5)
    outcome, session = judged(wrong_above_half)
    first_failure = next(i for i, x in enumerate(session.inputs) if np.any(x > 0.5))
    assert outcome.status == "failed"
    assert len(session.called) - (first_failure + 1) <= 5


@pytest.mark.parametrize("calls", [3, 64])
def test_a_bounded_shrink_reports_a_failing_input_and_the_same_one_every_time(monkeypatch, calls):
    monkeypatch.setattr(values, "SHRINK_CALLS", calls)
    first, second = judged(wrong_above_half)[0], judged(wrong_above_half)[0]
    assert first.status == "failed" and first.counterexample == second.counterexample
    reported = np.asarray(eval(first.counterexample.removeprefix("x = ").replace("jnp.", "np.")), np.float32)
    assert wrong_above_half(reported) != float(np.sum(reported, dtype=np.float64))


def test_enough_calls_find_the_same_smallest_input_as_an_unbounded_shrink(monkeypatch):
    bounded = judged(skips_first)[0]
    monkeypatch.setattr(values, "SHRINK_CALLS", 10**9)
    assert judged(skips_first)[0].counterexample == bounded.counterexample



def test_a_seed_draws_the_same_inputs_whatever_the_process_has_imported(tmp_path) -> None:
    """Hypothesis would mix in constants read from every 'local' module loaded (a checkout's
    grader, an instructor's script): the same seed must draw the same inputs regardless."""
    (tmp_path / "lots_of_constants.py").write_text(
        "VALUES = [" + ", ".join(repr(i * 1.37) for i in range(300)) + "]\n")
    script = ("import hashlib, pickle, sys\n"
              "if sys.argv[1] == 'more':\n"
              f"    sys.path.insert(0, {str(tmp_path)!r}); import lots_of_constants\n"
              "    import grader.authoring.export, grader.batch.run, grader.authoring.validate\n"
              "from grader import find_exercise\n"
              "check = next(c for c in find_exercise('named_sharding_replicated').checks if c.id == 'value.random_vectors')\n"
              "print(hashlib.sha256(pickle.dumps([sorted((k, v.tobytes()) for k, v in d.items()) "
              "for d in check.draw(0)])).hexdigest())\n")
    digests = [subprocess.run([sys.executable, "-c", script, mode], capture_output=True, text=True, timeout=300,
                              cwd=tmp_path).stdout.strip() for mode in ("few", "more")]
    assert digests[0] and digests[0] == digests[1], digests


def test_threads_asking_for_one_draw_at_once_share_one_draw():
    """Validation draws later seeds while grading threads may already need them: a thread that
    asks for a draw being made waits for it and gets the same list, never a second draw; a draw
    of another seed asked for at the same time is its own."""
    import threading

    check = ValueProperty(id="value.sum", title="sums", inputs=arguments(dims(n=LENGTHS), x=float32_array("n")))
    results: dict[str, Any] = {}
    start = threading.Barrier(3)

    def draw(name: str, seed: int) -> None:
        start.wait()
        results[name] = check.draw(seed)

    threads = [threading.Thread(target=draw, args=(name, seed)) for name, seed in (("a", 11), ("b", 11), ("c", 12))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results["a"] is results["b"]
    assert results["c"] is not results["a"] and len(results["c"]) == len(results["a"])
    assert check.draw(11) is results["a"]
