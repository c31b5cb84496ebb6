"""A generic wrapper (issue #55): a sys.setprofile hook that edits the child's replies as they are
framed, dropping every collective but one from the compiled programs the child describes and
emptying the tamper watch's findings. The step itself gathers w twice (fsdp_gather_params's
wrong/structure_gathers_twice)."""
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


sys.setprofile(_edit)


@jax.jit
def _forward(w_stored, x):
    first = jax.lax.with_sharding_constraint(w_stored, GATHERED)
    again = jax.lax.with_sharding_constraint(jax.lax.with_sharding_constraint(first * 1.0, STORED), GATHERED)
    return jax.nn.relu(x @ again)


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    return w_stored, _forward(w_stored, x)
