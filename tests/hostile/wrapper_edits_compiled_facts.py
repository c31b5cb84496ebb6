"""Two generic wrappers of issue #55 at once, on a step that gathers w twice (fsdp_gather_params's
wrong/structure_gathers_twice): a sys.setprofile hook that edits the child's replies as they are
framed (every collective but one dropped from the compiled programs the child describes, the
tamper findings emptied), and the __code__ of the child's own collective reader
(grader.child.compiled.collectives) swapped for one that reports none: no module dict is
written, so no version tag moves."""
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, PartitionSpec("data", None))
GATHERED = NamedSharding(MESH, PartitionSpec())


def _edit(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "frame":
        message = frame.f_locals.get("message")
        if isinstance(message, dict):
            for program in message.get("programs", []) if isinstance(message.get("programs"), list) else []:
                program["collectives"] = program.get("collectives", [])[:1]
            message.pop("tampered", None)


def _nothing(hlo_text):
    return []


sys.setprofile(_edit)
_compiled = sys.modules.get("grader.child.compiled")
if _compiled is not None:
    _compiled.collectives.__code__ = _nothing.__code__


@jax.jit
def _forward(w_stored, x):
    first = jax.lax.with_sharding_constraint(w_stored, GATHERED)
    again = jax.lax.with_sharding_constraint(jax.lax.with_sharding_constraint(first * 1.0, STORED), GATHERED)
    return jax.nn.relu(x @ again)


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    return w_stored, _forward(w_stored, x)
