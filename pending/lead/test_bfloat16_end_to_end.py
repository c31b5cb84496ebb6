"""Goes to tests/ with pending/lead/child_bfloat16.patch (grader/observe/child.py is the lead's):
a bfloat16 product is judged as the numbers it holds, end to end."""
from __future__ import annotations

from pathlib import Path

from grader import find_exercise, grade

BFLOAT16_PRODUCT = '''import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def matmul_2d(x, w):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
    rows = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data", None)))
    columns = jax.device_put(w, NamedSharding(mesh, PartitionSpec(None, "model")))
    return rows.astype(jnp.bfloat16) @ columns.astype(jnp.bfloat16)
'''


def test_a_bfloat16_result_is_compared_as_its_numbers(tmp_path: Path):
    submission = tmp_path / "bfloat16_product.py"
    submission.write_text(BFLOAT16_PRODUCT)
    report = grade(find_exercise("matmul_2d"), submission)
    value = next(c for c in report.checks if c.id == "value.random_matrices")
    assert value.status == "failed" and "not an array of real numbers" not in value.message
    assert "elements are wrong" in value.message and "your function returned 256.0" in value.message, value.message
