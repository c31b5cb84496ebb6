"""grader.child.donation: what a jitted call's donation gave up, read from the executable and
the call, agrees with what JAX did. A real process with 4 simulated devices runs each call with
``Donations`` reading it as the jit route does; afterwards (in the test's own process, never
the grader's) ``is_deleted()`` says which arrays the call really gave up. JAX 0.10 survives that
here: nothing is moved between devices. And a donating step graded end to end, in the styles
the fact must cover (two operands donated, one reused; a step compiled ahead of time)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader import find_exercise, grade

SCRIPT = """
import json, warnings
warnings.simplefilter("ignore")
import jax, jax.numpy as jnp, numpy as np
from jax._src import pjit
from jax.sharding import NamedSharding, PartitionSpec as P
from grader.child.donation import Donations

mesh = jax.make_mesh((4,), ("d",))
rows = NamedSharding(mesh, P("d"))
donations, seen = Donations(type(jnp.ones(1))), []
run = pjit._run_python_pjit

def observed(p, args, *rest):  # as grader.child.route_jit reads a call
    donated = p.params.get("donated_invars") or ()
    placed = donations.before(args, donated) if any(donated) else None
    result = run(p, args, *rest)
    if placed and result[5] is not None:
        seen.append(donations.after(result[5], placed, len(result[7])))
    return result

CASES = {
    "output written over it": (jax.jit(lambda x: x * 2, donate_argnums=0), lambda: (jnp.ones(8),)),
    "no output of its shape": (jax.jit(lambda x: x.sum(), donate_argnums=0), lambda: (jnp.ones(8),)),
    "two donated, one output": (jax.jit(lambda x, y: x + y, donate_argnums=(0, 1)),
                                lambda: (jnp.ones(8), jnp.ones(8))),
    "the unread one donated": (jax.jit(lambda x, y: y * 2, donate_argnums=0), lambda: (jnp.ones(8), jnp.ones(8))),
    "the read one donated": (jax.jit(lambda x, y: y * 2, donate_argnums=1), lambda: (jnp.ones(8), jnp.ones(8))),
    "placed as the program wants": (jax.jit(lambda x: x * 2, donate_argnums=0, in_shardings=rows),
                                    lambda: (jax.device_put(jnp.ones(8), rows),)),
    "copied onto the program's placement": (jax.jit(lambda x: x * 2, donate_argnums=0, in_shardings=rows),
                                            lambda: (jnp.ones(8),)),
    "on another device": (jax.jit(lambda x: x * 2, donate_argnums=0),
                          lambda: (jax.device_put(jnp.ones(8), jax.devices()[2]),)),
    "another dtype of the same size": (jax.jit(lambda x: x.astype(jnp.int32), donate_argnums=0),
                                       lambda: (jnp.ones(8),)),
    "a NumPy array": (jax.jit(lambda x: x * 2, donate_argnums=0), lambda: (np.ones(8, np.float32),)),
    "returned as it is": (jax.jit(lambda x: x, donate_argnums=0), lambda: (jnp.ones(8),)),
    "leaves of a pytree": (jax.jit(lambda t: jax.tree.map(lambda a: a - 1, t), donate_argnums=0),
                           lambda: ({"a": jnp.ones(8), "b": jnp.ones((2, 3))},)),
}
pjit._run_python_pjit = observed
found = {}
for name, (step, make) in CASES.items():
    given = make()
    seen.clear()
    step(*given)
    pjit._run_python_pjit = run
    leaves = jax.tree.leaves(given)
    deleted = [i for i, leaf in enumerate(leaves) if isinstance(leaf, jax.Array) and leaf.is_deleted()]
    pjit._run_python_pjit = observed
    reused, copied = seen[-1] if seen else ((), ())
    found[name] = {"reused": list(reused), "copied": list(copied), "deleted": deleted}
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def found() -> dict[str, dict[str, list[int]]]:
    environment = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
    ran = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                         env=environment, cwd=Path(__file__).resolve().parents[1])
    assert ran.returncode == 0, ran.stderr[-3000:]
    return json.loads(ran.stdout.strip().splitlines()[-1])


def test_what_the_executable_says_was_given_up_is_what_jax_deleted(found) -> None:
    disagree = {name: case for name, case in found.items() if case["reused"] != case["deleted"]}
    assert not disagree
    assert len(found) == 12


@pytest.mark.parametrize("name, reused, copied", [
    ("output written over it", [0], []),
    ("no output of its shape", [], []),
    ("two donated, one output", [0], []),  # one output: one buffer taken, the other kept
    ("the unread one donated", [], []),
    ("copied onto the program's placement", [], [0]),  # the copy was given up, not the array given
    ("a NumPy array", [], []),  # nothing of the student's to give up: JAX made the device copy
    ("leaves of a pytree", [0, 1], []),
])
def test_each_style_of_donation_is_read_truly(found, name: str, reused: list[int], copied: list[int]) -> None:
    assert (found[name]["reused"], found[name]["copied"]) == (reused, copied)


@pytest.fixture(scope="module")
def sgd_step():
    return find_exercise("sgd_step")


@pytest.mark.parametrize("source, status", [
    # w and g both donated: the one output takes w's buffer, so w is reused
    ('''
    from functools import partial
    import jax
    @partial(jax.jit, donate_argnums=(0, 1))
    def sgd_step(w, g, lr):
        return w - lr * g
    ''', "passed"),
    # compiled ahead of time on the first call, kept, called after
    ('''
    import jax
    _compiled = {}
    def sgd_step(w, g, lr):
        key = (w.shape, w.dtype)
        if key not in _compiled:
            _compiled[key] = jax.jit(lambda w, g, lr: w - lr * g, donate_argnums=0).lower(w, g, lr).compile()
        return _compiled[key](w, g, lr)
    ''', "passed"),
    # g donated, w not: the output takes g's buffer
    ('''
    from functools import partial
    import jax
    @partial(jax.jit, donate_argnums=1)
    def sgd_step(w, g, lr):
        return w - lr * g
    ''', "failed"),
], ids=["two_donated", "ahead_of_time", "the_other_one"])
def test_a_graded_step_is_judged_by_what_its_executable_reused(sgd_step, tmp_path: Path, source: str,
                                                                status: str) -> None:
    path = tmp_path / "solution.py"
    path.write_text(textwrap.dedent(source))
    report = grade(sgd_step, path, compile_cache=False)
    result = next(c for c in report.checks if c.id == "structure.donates_w")
    assert result.status == status, result.message
