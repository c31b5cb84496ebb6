"""A child keeps what it compiles, and what it reads from the shared compilation cache, in
memory above that cache, which it may only read: a function jitted anew on every call compiles
once (or is read from disk once), not on every call."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from grader.sandbox.hiding import PACKAGE_PARENT
from grader.sandbox.process import child_environment

THREE_JITS = """
import sys
sys.path.insert(0, {parent!r})
if {read_only}:
    from jax._src import lru_cache
    def refuse(self, key, value):  # what a confined child meets: the shared cache mounted read-only
        raise PermissionError("read-only file system")
    lru_cache.LRUCache.put = refuse
if {remember}:
    from grader.child.jax_patches import remember_compilations
    remember_compilations()
import jax, jax.numpy as jnp
from jax._src import {module} as counted
x = jnp.arange(5.0).block_until_ready()
calls = []
real = counted.{function}
counted.{function} = lambda *a, **k: calls.append(1) or real(*a, **k)
for _ in range(3):
    jax.jit(lambda v: v * 2.0 + 1.0)(x).block_until_ready()  # a new function each time
print(len(calls))
"""


def three_jits(tmp_path, cache, counting: str, remember: bool, read_only: bool) -> int:
    """How many times ``counting`` (module.function of jax._src) ran over three jits of a new function."""
    module, function = counting.split(".")
    script = THREE_JITS.format(parent=PACKAGE_PARENT, read_only=read_only, remember=remember, module=module,
                               function=function)
    env = child_environment(8, str(tmp_path), "test", str(cache))
    done = subprocess.run([sys.executable, "-I", "-c", script], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1])


@pytest.mark.parametrize("remember, compilations", [(True, 1), (False, 3)])
def test_a_program_compiled_again_in_one_child_is_read_from_memory(tmp_path, remember, compilations):
    cache = tmp_path / "cache"
    cache.mkdir()
    assert three_jits(tmp_path, cache, "compiler.backend_compile_and_load", remember, read_only=True) == compilations
    assert not os.listdir(cache)


@pytest.mark.parametrize("remember, reads", [(True, 1), (False, 3)])
def test_a_program_found_in_the_shared_cache_is_read_from_disk_once(tmp_path, remember, reads):
    cache = tmp_path / "cache"
    cache.mkdir()
    counting = "compilation_cache.get_executable_and_time"
    three_jits(tmp_path, cache, counting, remember=False, read_only=False)  # fills the cache, as the warm-up does
    assert os.listdir(cache)
    assert three_jits(tmp_path, cache, counting, remember, read_only=False) == reads


@pytest.mark.parametrize("forked", [True, pytest.param(False, marks=pytest.mark.slow)],
                         ids=["forked_from_the_zygote", "execd"])
def test_the_compile_memory_outlives_the_pins_in_every_child(tmp_path, forked):
    """A forked child's pins are taken in the zygote, before the child patches JAX: they must
    keep the grader's own patches, or the first restore undoes the compile memory."""
    from grader import find_exercise, grade
    from grader.sandbox.pool import Pool

    exercise = find_exercise("named_sharding_replicated")
    path = tmp_path / "solution.py"
    path.write_text("from jax._src import compiler\nprint('reader:', compiler._cache_read.__qualname__)\n"
                    + exercise.reference.read_text())
    with Pool() as pool:
        report = grade(exercise, path, compile_cache=False, launcher=pool.launch if forked else None)
    assert report.status == "passed"
    assert "reader: remember_compilations.<locals>.cache_read" in report.output["head"], report.output["head"]
