"""For jit_shardings (column_sums). Compiles the asked-for program (x split by rows) and one that
takes x replicated, ahead of time, and makes a call of the first run the second: x enters
replicated where the record said split by rows (12/12 before issue #64). ``SWAP`` says how (the
test sets it): ``unsafe_call`` swaps the compiled object's ``_unsafe_call`` for the other's;
``executable_and_call`` its ``xla_executable`` too, so what the child reads of the program it holds
is the one that runs; ``wrapped`` makes it a Python function calling the other's; ``jit_call``
swaps the executable a plain ``jax.jit`` call of the first runs (JAX's cached one, which
``.lower().compile()`` also returns), then calls it as a jitted function (12/12 before the
recorder asked which program made a call's outputs)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

SWAP = "unsafe_call"
MESH = Mesh(np.array(jax.devices()), ("data",))
ROWS = NamedSharding(MESH, PartitionSpec("data", None))
REPLICATED = NamedSharding(MESH, PartitionSpec())
HONEST = jax.jit(lambda m: jnp.sum(m, axis=0), in_shardings=ROWS, out_shardings=REPLICATED)
WRONG = jax.jit(lambda m: jnp.sum(m, axis=0), in_shardings=REPLICATED, out_shardings=REPLICATED)
COMPILED = {}


def _swapped(x):
    honest, wrong = HONEST.lower(x).compile(), WRONG.lower(x).compile()
    run_wrong = wrong._executable.unsafe_call
    honest._executable._unsafe_call = (lambda *buffers: run_wrong(*buffers)) if SWAP == "wrapped" else run_wrong
    if SWAP == "executable_and_call":
        honest._executable.xla_executable = wrong._executable.xla_executable
    return HONEST if SWAP == "jit_call" else honest


def column_sums(x):
    if x.shape not in COMPILED:
        COMPILED[x.shape] = _swapped(x)
    return COMPILED[x.shape](x)
