"""Reproducer (not an exercise variant), graded against exercises/fsdp_gather_params:

    .venv/bin/jaxgrade check tests/data/issue42/fsdp_device_put_inside_jit.py -e fsdp_gather_params

The gather written as jax.device_put to the replicated sharding inside the jitted forward. On
JAX 0.10.2 XLA does not gather w for it: it compiles partial products and an all-reduce of the
output (192 bytes), so the exercise's statement does not offer this route and the variant fails
structure.compiled_all_gather, one_gather, gathers_w and gather_in_forward rightly.

What the check library misjudges: structure.stored_eighth (PlacedAtMostPerDevice) counts the
device_put *inside* jit as a placement of all of w on every device, as if it were eager. Under
jit it is a sharding constraint on a value of the program, nothing held between programs, so
an FSDP "at most 1/8 per device between programs" budget should not read it."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
STORED = NamedSharding(MESH, P("data", None))

WHOLE = NamedSharding(MESH, P())


def _forward(w_stored, x):
    return jax.nn.relu(x @ jax.device_put(w_stored, WHOLE))


FORWARD = jax.jit(_forward)


def fsdp_forward(w, x):
    w_stored = jax.device_put(w, STORED)
    return w_stored, FORWARD(w_stored, x)
