"""A call that JAX's own compiler or runtime fails on, on an input the exercise allows, is told
as a JAX limitation, on the smallest such input, and no message shows a file of the grader's
or JAX's by its absolute path, nor a compiler dump."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO
from grader import find_exercise, grade

# A correct sum (a dot product with ones) that an unjitted shard_map cannot lower for an empty x.
EAGER_DOT = '''import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec


def sharded_sum(x):
    mesh = Mesh(np.array(jax.devices()), ("data",))
    per_device = lambda block, ones: jax.lax.psum(jnp.dot(block, ones), "data")
    return jax.shard_map(per_device, mesh=mesh, in_specs=(PartitionSpec("data"), PartitionSpec("data")),
                         out_specs=PartitionSpec())(x, jnp.ones_like(x))
'''


@pytest.mark.slow
def test_a_jax_lowering_failure_is_a_jax_limitation_on_the_smallest_input(tmp_path: Path):
    submission = tmp_path / "eager_dot.py"
    submission.write_text(EAGER_DOT)
    report = grade(find_exercise("shard_map_psum"), submission)
    value = next(c for c in report.checks if c.id == "value.random_vectors")
    assert value.status == "failed" and "made JAX itself fail (a limitation of JAX on this input" in value.message
    assert value.counterexample == "x = jnp.array([], dtype=jnp.float32)"
    assert "GlobalToLocalShape" in value.message  # the diagnostic's first line is kept
    shown = "\n".join(f"{c.message} {c.observed or ''}" for c in report.checks)
    for leak in (str(REPO), "site-packages", str(tmp_path), "see current operation", "note: called from"):
        assert leak not in shown, leak
