"""bfloat16 results (NumPy dtype kind 'V', through ml_dtypes) cross the channel and are judged as
the numbers they are, not as "not an array of real numbers". A returned one travels as the float32
array of the same numbers (exact), its dtype named beside it, so the grader's process never imports
ml_dtypes; arguments travel as they are."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from grader import find_exercise, grade
from grader.checks.values import compare
from grader.observe.returned import Returned, parse_leaves
from grader.wire import WIDENED, carries, decode_array, encode_array, itemsize


def returned(value: np.ndarray) -> Returned:
    """What the parent makes of the child's description of a JAX array holding ``value``
    (grader.child.server: widened to float32 on the way)."""
    described = {"path": "result", "kind": "jax_array", "type": "jaxlib._jax.ArrayImpl", "dtype": str(value.dtype),
                 "shape": list(value.shape), "array": encode_array(value.astype(np.float32))}
    return Returned(True, leaves=parse_leaves({"leaves": [described]}))


def test_a_bfloat16_array_round_trips_as_bfloat16():
    array = np.array([1.5, -0.0, np.inf, 3.0e38], ml_dtypes.bfloat16)
    back = decode_array(encode_array(array))
    assert carries(array.dtype) and back.dtype == array.dtype and back.tobytes() == array.tobytes()


def test_the_bytes_of_every_narrow_dtype_are_known_without_ml_dtypes():
    # issue #55: a byte budget of an int4 result failed with "data type 'int4' not understood"
    for name in WIDENED:
        if hasattr(ml_dtypes, name):
            assert itemsize(name) == np.dtype(getattr(ml_dtypes, name)).itemsize, name
    assert itemsize("float32") == 4 and itemsize("<i8") == 8 and itemsize("not a dtype") is None


def test_a_bfloat16_vector_is_compared_element_by_element():
    got = returned(np.array([1.5, 2.0, 3.0], ml_dtypes.bfloat16))
    assert compare(got, np.array([1.5, 2.0, 3.0]), 0.0) is None
    problem = compare(got, np.array([1.5, 2.0, 3.01]), 1e-3)
    assert problem.startswith("1 of 3 elements are wrong; at index 2 your function returned 3.0"), problem


def test_a_bfloat16_scalar_is_one_number():
    got = returned(np.array(0.5, ml_dtypes.bfloat16))
    assert got.number() == 0.5 and compare(got, 0.5, 0.0) is None
    assert compare(got, 0.25, 0.0) == "your function returned 0.5; the exact answer is 0.25"


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


@pytest.mark.slow
def test_a_bfloat16_result_is_compared_as_its_numbers(tmp_path: Path):
    submission = tmp_path / "bfloat16_product.py"
    submission.write_text(BFLOAT16_PRODUCT)
    report = grade(find_exercise("matmul_2d"), submission)
    value = next(c for c in report.checks if c.id == "value.random_matrices")
    assert value.status == "failed" and "not an array of real numbers" not in value.message
    # bfloat16 keeps 8 bits of mantissa: the shrunk product is off by the rounding of a number above 256
    assert "elements are wrong" in value.message and "your function returned" in value.message, value.message


@pytest.mark.slow
def test_grading_a_bfloat16_result_never_imports_ml_dtypes_in_the_graders_process(tmp_path: Path):
    solution = tmp_path / "solution.py"
    solution.write_text("import jax, jax.numpy as jnp\nfrom jax.sharding import Mesh, NamedSharding, PartitionSpec\n"
                        "import numpy as np\n\ndef replicated_sharding_value(x):\n"
                        "    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))\n"
                        "    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))\n"
                        "    return jnp.sum(placed).astype(jnp.bfloat16)\n")
    script = ("import sys\nfrom grader import find_exercise, grade\n"
              f"report = grade(find_exercise('named_sharding_replicated'), {str(solution)!r})\n"
              "types = [c for c in report.checks if c.id == 'type.float32_scalar']\n"
              "print(types[0].status, 'dtype bfloat16' in types[0].message, 'ml_dtypes' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.stdout.split() == ["failed", "True", "False"], out.stdout + out.stderr


NARROW_SUM = '''import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    placed = jax.device_put(x, NamedSharding(Mesh(np.array(jax.devices()[:1]), ("data",)), PartitionSpec()))
    return jnp.sum(placed).astype(jnp.DTYPE)
'''


@pytest.mark.parametrize("dtype", ["int4", "uint4", "int2", "float8_e4m3fn", "float8_e4m3b11fnuz", "float4_e2m1fn"])
def test_a_result_in_any_narrow_dtype_is_graded_as_its_numbers(tmp_path: Path, dtype: str):
    # issue #40 point 5: a legal dtype is the submission's answer, never a grader error or "not a number"
    submission = tmp_path / f"narrow_{dtype}.py"
    submission.write_text(NARROW_SUM.replace("DTYPE", dtype))
    report = grade(find_exercise("named_sharding_replicated"), submission)
    assert not [c for c in report.checks if c.status == "error"], report.checks
    value = next(c for c in report.checks if c.id == "value.random_vectors")
    assert value.status == "failed" and "your function returned" in value.message, value.message
    assert "not one number" not in value.message, value.message
    assert dtype in next(c for c in report.checks if c.category == "type").message
