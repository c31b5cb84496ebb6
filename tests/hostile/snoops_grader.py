"""Tries to read what the grader keeps for itself: the class run's output folder (gradebook,
classmates' reports), a classmate's submission, the grader's checkout and its git directory
(every version of every reference and PROBE), the grader's command line and every other
process's; then solves the task. Each attempt prints READ with what it got, or DENIED."""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

OUT, CLASSMATE, CHECKOUT, GIT_DIRECTORY, GRADER_PID = {OUT}, {CLASSMATE}, {CHECKOUT}, {GIT_DIRECTORY}, {GRADER_PID}


def _look(path: str) -> object:
    if os.path.isdir(path):
        return sorted(os.listdir(path))
    with open(path, "rb") as handle:
        return handle.read(300)


def _try(label: str, path: str) -> None:
    try:
        print("READ", label, repr(_look(path))[:300], flush=True)
    except OSError as error:
        print("DENIED", label, type(error).__name__, flush=True)


_try("out", OUT)
_try("gradebook", os.path.join(OUT, "gradebook.csv"))
_try("classmate", CLASSMATE)
for name in ("README.md", "pyproject.toml", ".git", "exercises", "tests"):
    _try(f"checkout/{name}", os.path.join(CHECKOUT, name))
_try("git-directory", GIT_DIRECTORY)
_try("git-HEAD", os.path.join(GIT_DIRECTORY, "HEAD"))
_try("grader-cmdline", f"/proc/{GRADER_PID}/cmdline")
seen = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                seen.append(handle.read(200).replace(b"\0", b" "))
        except OSError:
            pass
print("PROCESSES", len(seen), seen, flush=True)
_try("control", "/etc/passwd")  # what any user may read stays readable: the attempts above are real


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
