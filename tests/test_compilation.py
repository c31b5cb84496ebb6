"""grader.checks.compilation: how often a submission's own jitted functions compile, and why
they compiled again, judged through the public API on real children.

The exercise here is written in the test (a step ``update(w, g, lr)`` that must compile once
while the learning rate changes), so the check is exercised apart from the catalogue."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from grader import grade
from grader.exercise import load_exercise

CHECKS = '''
import numpy as np
from grader.arguments import Array, Scalar, Signature
from grader.checks import CompilesAtMost, LoadsFunction, WithinLimits

SIGNATURE = Signature({"w": Array("float32", "n"), "g": Array("float32", "n"), "lr": Scalar("float")},
                      returns=Array("float32", "n"))
PROBE = {"w": np.array([1.0, -2.0, 0.5], np.float32), "g": np.array([0.25, 1.0, -4.0], np.float32), "lr": 0.1}
CHECKS = [
    LoadsFunction(id="load.function", title="Loads"),
    CompilesAtMost(id="structure.compiles_once", title="The step compiles once while lr changes"),
    WithinLimits(id="limits.resources", title="Limits"),
]
'''
TOML = '''
slug = "update_once"
title = "One compiled update"
version = "1"
function = "update"
devices = 1
[points]
"load.function" = 1
"structure.compiles_once" = 1
"limits.resources" = 1
'''
REFERENCE = '''
import jax

@jax.jit
def update(w, g, lr):
    return w - lr * g
'''


@pytest.fixture(scope="module")
def exercise(tmp_path_factory: pytest.TempPathFactory):
    directory = tmp_path_factory.mktemp("exercises") / "update_once"
    directory.mkdir()
    for name, text in (("checks.py", CHECKS), ("exercise.toml", TOML), ("reference.py", REFERENCE)):
        (directory / name).write_text(textwrap.dedent(text))
    return load_exercise(directory)


def judged(exercise, tmp_path: Path, source: str):
    path = tmp_path / "solution.py"
    path.write_text(textwrap.dedent(source))
    report = grade(exercise, path, compile_cache=False)
    return next(c for c in report.checks if c.id == "structure.compiles_once")


@pytest.mark.parametrize("source", [
    REFERENCE,
    # jitted once at import, called from a plain function
    '''
    import jax
    step = jax.jit(lambda w, g, lr: w - lr * g)
    def update(w, g, lr):
        return step(w, g, lr)
    ''',
    # jax.jit applied on every call to the same module-level function: JAX's caches still serve it
    '''
    import jax
    def _step(w, g, lr):
        return w - lr * g
    def update(w, g, lr):
        return jax.jit(_step)(w, g, lr)
    ''',
    # a loop of calls to one jitted helper, eager work around it
    '''
    import jax, jax.numpy as jnp
    @jax.jit
    def scaled(g, lr):
        return lr * g
    def update(w, g, lr):
        for _ in range(3):
            s = scaled(g, lr)
        return jnp.asarray(w) - s
    ''',
], ids=["decorated", "jitted_lambda_global", "jit_at_each_call", "helper_in_loop"])
def test_a_step_compiled_once_passes(exercise, tmp_path: Path, source: str) -> None:
    result = judged(exercise, tmp_path, source)
    assert result.status == "passed", result.message


def test_a_static_learning_rate_fails_naming_it(exercise, tmp_path: Path) -> None:
    result = judged(exercise, tmp_path, '''
    from functools import partial
    import jax
    @partial(jax.jit, static_argnums=2)
    def update(w, g, lr):
        return w - lr * g
    ''')
    assert result.status == "failed"
    assert "update at solution.py:" in result.message and "compiled 4 times over 4 calls" in result.message
    assert "the static argument lr changed from 0.1 to" in result.message


def test_a_function_jitted_anew_inside_fails(exercise, tmp_path: Path) -> None:
    result = judged(exercise, tmp_path, '''
    import jax
    def update(w, g, lr):
        return jax.jit(lambda a, b: a - lr * b)(w, g)
    ''')
    assert result.status == "failed"
    assert "it is a new function each time" in result.message


def test_a_learning_rate_baked_in_by_partial_fails(exercise, tmp_path: Path) -> None:
    result = judged(exercise, tmp_path, '''
    from functools import partial
    import jax
    def _step(w, g, lr):
        return w - lr * g
    def update(w, g, lr):
        return jax.jit(partial(_step, lr=lr))(w, g)
    ''')
    assert result.status == "failed", result.message


def test_no_jit_at_all_fails(exercise, tmp_path: Path) -> None:
    result = judged(exercise, tmp_path, '''
    import jax.numpy as jnp
    def update(w, g, lr):
        return jnp.asarray(w) - lr * jnp.asarray(g)
    ''')
    assert result.status == "failed"
    assert "None of your own jitted functions ran" in result.message


def test_a_shape_that_depends_on_a_value_fails_naming_the_argument(exercise, tmp_path: Path) -> None:
    # a padded length read from lr: a new shape, so a new program, every call
    result = judged(exercise, tmp_path, '''
    import jax, jax.numpy as jnp
    @jax.jit
    def _step(w, g, lr):
        return w - lr * g[: w.shape[0]]
    def update(w, g, lr):
        padded = jnp.concatenate([jnp.asarray(g), jnp.zeros(int(lr * 1000) % 7 + 1, jnp.float32)])
        return _step(w, padded, lr)
    ''')
    assert result.status == "failed"
    assert "g changed from float32[" in result.message
