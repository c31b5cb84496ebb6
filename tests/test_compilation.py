"""grader.checks.compilation through the public API, on real children: how often a
submission's own jitted functions compile and why they compiled again (``CompilesAtMost``),
and which argument buffers they donate (``Donates``), on the sgd_step exercise and solutions
in styles its right/ and wrong/ variants do not have."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from grader import find_exercise, grade


@pytest.fixture(scope="module")
def exercise():
    return find_exercise("sgd_step")


def judged(exercise, tmp_path: Path, source: str, check_id: str):
    path = tmp_path / "solution.py"
    path.write_text(textwrap.dedent(source))
    report = grade(exercise, path, compile_cache=False)
    return next(c for c in report.checks if c.id == check_id)


@pytest.mark.parametrize("source", [
    # jitted once at import as a lambda, called from a plain function
    '''
    import jax
    step = jax.jit(lambda w, g, lr: w - lr * g, donate_argnums=0)
    def sgd_step(w, g, lr):
        return step(w, g, lr)
    ''',
    # a loop of calls to one jitted helper, eager work around it
    '''
    import jax, jax.numpy as jnp
    @jax.jit
    def scaled(g, lr):
        return lr * g
    def sgd_step(w, g, lr):
        for _ in range(3):
            s = scaled(g, lr)
        return jnp.asarray(w) - s
    ''',
    # lr made a strongly typed float32 array before the call: traced, one program
    '''
    import jax, jax.numpy as jnp
    @jax.jit
    def _step(w, g, lr):
        return w - lr * g
    def sgd_step(w, g, lr):
        return _step(w, g, jnp.float32(lr))
    ''',
], ids=["jitted_lambda_global", "helper_in_loop", "lr_as_array"])
def test_a_step_compiled_once_passes(exercise, tmp_path: Path, source: str) -> None:
    result = judged(exercise, tmp_path, source, "structure.compiles_once")
    assert result.status == "passed", result.message


def test_a_static_learning_rate_fails_naming_it_once(exercise, tmp_path: Path) -> None:
    result = judged(exercise, tmp_path, '''
    from functools import partial
    import jax
    @partial(jax.jit, static_argnames="lr")
    def sgd_step(w, g, lr):
        return w - lr * g
    ''', "structure.compiles_once")
    assert result.status == "failed"
    # the probe call (lr = 0.3) compiled it before this check's calls: calls 2 to 4 compile again
    assert "sgd_step at solution.py:" in result.message and "compiled 3 times over 4 calls" in result.message
    assert "Call 2 compiled it again because the static argument lr changed from 0.3 to 0.15" in result.message
    assert "(Calls 3 and 4: the same.)" in result.message


@pytest.mark.slow
def test_a_function_jitted_anew_inside_fails(exercise, tmp_path: Path) -> None:
    result = judged(exercise, tmp_path, '''
    import jax
    def sgd_step(w, g, lr):
        def step(a, b):
            return a - lr * b
        return jax.jit(step)(w, g)
    ''', "structure.compiles_once")
    assert result.status == "failed"
    assert "step at solution.py:4" in result.message and "it is a new function each time" in result.message


@pytest.mark.slow
def test_a_shape_that_depends_on_a_value_fails_naming_the_argument(exercise, tmp_path: Path) -> None:
    # a padding whose length is read from lr: a new shape, so a new program, on every call
    result = judged(exercise, tmp_path, '''
    import jax, jax.numpy as jnp
    @jax.jit
    def _step(w, g, lr):
        return w - lr * g[: w.shape[0]]
    def sgd_step(w, g, lr):
        padded = jnp.concatenate([jnp.asarray(g), jnp.zeros(int(lr * 1000) % 7 + 1, jnp.float32)])
        return _step(w, padded, lr)
    ''', "structure.compiles_once")
    assert result.status == "failed"
    assert "because g changed from float32[" in result.message


@pytest.mark.slow
def test_no_jit_at_all_fails_both_checks(exercise, tmp_path: Path) -> None:
    source = '''
    import jax.numpy as jnp
    def sgd_step(w, g, lr):
        return jnp.asarray(w) - lr * jnp.asarray(g)
    '''
    assert "None of your own jitted functions ran" in judged(exercise, tmp_path, source,
                                                             "structure.compiles_once").message
    assert judged(exercise, tmp_path, source, "structure.donates_w").message.startswith("No jitted function of yours ran")


def test_a_donated_buffer_no_output_can_take_is_not_reused(exercise, tmp_path: Path) -> None:
    result = judged(exercise, tmp_path, '''
    from functools import partial
    import jax, jax.numpy as jnp
    @partial(jax.jit, donate_argnums=0)
    def sgd_step(w, g, lr):
        return jnp.sum(w - lr * g)
    ''', "structure.donates_w")
    assert result.status == "failed"
    assert "w is donated to sgd_step at solution.py:" in result.message and "did not reuse its buffer" in result.message


def test_donating_inside_a_pytree_counts_by_the_leaf_given(exercise, tmp_path: Path) -> None:
    result = judged(exercise, tmp_path, '''
    from functools import partial
    import jax
    @partial(jax.jit, donate_argnums=0)
    def _apply(state, g, lr):
        return {"w": state["w"] - lr * g}
    def sgd_step(w, g, lr):
        return _apply({"w": w}, g, lr)["w"]
    ''', "structure.donates_w")
    assert result.status == "passed", result.message


def test_a_placed_copy_donated_is_judged_not_a_grader_error(exercise, tmp_path: Path) -> None:
    # The placed array is deleted by the donation before the grader reads its buffers.
    path = tmp_path / "solution.py"
    path.write_text(textwrap.dedent('''
    from functools import partial
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    @partial(jax.jit, donate_argnums=0)
    def _step(w, g, lr):
        return w - lr * g
    def sgd_step(w, g, lr):
        placed = jax.device_put(w, NamedSharding(Mesh(np.array(jax.devices()[:1]), ("d",)), PartitionSpec()))
        return _step(placed, g, lr)
    '''))
    report = grade(exercise, path, compile_cache=False)
    assert not [c for c in report.checks if c.status == "error"], report.checks
    assert all(c.status == "passed" for c in report.checks if c.id != "structure.donates_w"), report.checks
    donates = next(c for c in report.checks if c.id == "structure.donates_w")
    assert donates.status == "failed" and "is not the w your function was given" in donates.message


@pytest.mark.slow
def test_the_first_call_at_the_checks_shapes_is_no_recompile_in_the_message(tmp_path: Path) -> None:
    # no_recompile's value check calls the step at other shapes first: this check's first compile
    # is the first at its shapes, so only the new function on every call is named as a cause
    exercise = find_exercise("no_recompile")
    report = grade(exercise, exercise.directory / "wrong" / "structure_jit_inside_step.py", compile_cache=False)
    result = next(c for c in report.checks if c.id == "structure.compiles_once")
    assert result.status == "failed" and "compiled 5 times over 5 calls" in result.message, result.message
    assert "Call 1 compiled it again" not in result.message and "changed from" not in result.message, result.message
    assert "Call 2 compiled it again because it is a new function each time" in result.message, result.message
    assert "(Calls 3, 4 and 5: the same.)" in result.message, result.message


# -- every route to a compiled program (issue #40): callable objects, partials, ahead of time ------
@pytest.mark.parametrize("source", [
    # an object with __call__ and a field (an Equinox or Flax NNX module's shape), jitted once
    '''
    import dataclasses
    import jax
    @dataclasses.dataclass(frozen=True)
    class Update:
        sign: float
        def __call__(self, w, g, lr):
            return w + self.sign * lr * g
    _step = jax.jit(Update(-1.0), donate_argnums=0)
    def sgd_step(w, g, lr):
        return _step(w, g, lr)
    ''',
    # a bound method of an object made once
    '''
    import jax
    class Optimizer:
        def update(self, w, g, lr):
            return w - lr * g
    _step = jax.jit(Optimizer().update, donate_argnums=0)
    def sgd_step(w, g, lr):
        return _step(w, g, lr)
    ''',
    # compiled ahead of time on the first call at a shape, and kept
    '''
    import jax
    _kept = {}
    def sgd_step(w, g, lr):
        if w.shape not in _kept:
            _kept[w.shape] = jax.jit(lambda w, g, lr: w - lr * g, donate_argnums=0).lower(w, g, lr).compile()
        return _kept[w.shape](w, g, lr)
    ''',
], ids=["callable_object", "bound_method", "aot_kept"])
def test_a_step_made_once_by_any_route_compiles_once_and_donates(exercise, tmp_path: Path, source: str) -> None:
    path = tmp_path / "solution.py"
    path.write_text(textwrap.dedent(source))
    report = grade(exercise, path, compile_cache=False)
    assert report.score == report.max_score, [(c.id, c.message) for c in report.checks if c.status != "passed"]


@pytest.mark.parametrize("source, named", [
    ('''
    import jax
    class Step:
        def __call__(self, w, g, lr):
            return w - lr * g
    def sgd_step(w, g, lr):
        return jax.jit(Step(), donate_argnums=0)(w, g, lr)
    ''', "Step.__call__ at solution.py:4 was compiled 4 times"),
    ('''
    import jax
    def sgd_step(w, g, lr):
        def update(w, g, lr):
            return w - lr * g
        return jax.jit(update, donate_argnums=0).lower(w, g, lr).compile()(w, g, lr)
    ''', "update at solution.py:4 was compiled 4 times"),
    # a static lr whose program is compiled ahead of time just before the (then cached) jitted call
    ('''
    from functools import partial
    import jax
    @partial(jax.jit, static_argnums=2, donate_argnums=0)
    def _step(w, g, lr):
        return w - lr * g
    def sgd_step(w, g, lr):
        _step.lower(w, g, lr).compile()
        return _step(w, g, lr)
    ''', "_step at solution.py:4 was compiled"),
], ids=["new_callable_each_call", "aot_each_call", "static_lr_compiled_ahead"])
def test_a_program_made_on_every_call_by_any_route_fails(exercise, tmp_path: Path, source: str, named: str) -> None:
    result = judged(exercise, tmp_path, source, "structure.compiles_once")
    assert result.status == "failed" and named in result.message, result.message


@pytest.mark.parametrize("variant", ["structure_donates_through_identity.py",
                                     "structure_numpy_step_donated_identity.py"])
def test_donating_w_where_the_result_is_not_computed_fails(exercise, variant: str) -> None:
    # the step eager or in NumPy, w donated to a jitted identity that computes nothing returned
    report = grade(exercise, exercise.directory / "wrong" / variant, compile_cache=False)
    result = next(c for c in report.checks if c.id == "structure.donates_w")
    assert result.status == "failed", result.message
    assert "what your function returns is not computed by that program" in result.message, result.message


@pytest.mark.slow
def test_a_function_compiled_twice_within_the_first_call_fails(exercise, tmp_path: Path) -> None:
    # a chunk index passed as a static argument: two programs, both made by the first call on the
    # probe's shapes, so the check's own calls (served by them) compile nothing
    result = judged(exercise, tmp_path, '''
    from functools import partial
    import jax, jax.numpy as jnp
    @partial(jax.jit, static_argnums=3)
    def _half(w, g, lr, chunk):
        return w.at[chunk::2].add(-lr * g[chunk::2])
    def sgd_step(w, g, lr):
        w = jnp.asarray(w)
        for chunk in range(2):
            w = _half(w, g, lr, chunk)
        return w
    ''', "structure.compiles_once")
    assert result.status == "failed", result.message
    assert "_half at solution.py:4 was compiled 2 times within one call of your function" in result.message
    assert "It was compiled again because the static argument chunk changed from 0 to 1" in result.message
    assert result.observed == "_half at solution.py:4 compiled 2 times in one call"
