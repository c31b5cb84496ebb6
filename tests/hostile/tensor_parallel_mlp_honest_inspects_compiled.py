"""For tensor_parallel_mlp: the honest control of the jitted swapped-call modes. The jitted
program's compiled executable (JAX's cached one) is read before each call, as a profiling
student does (its cost analysis, its memory, its text), and the function is then called as a
plain jitted function: the executable is held, its way of running untouched."""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("model",))
MLP = jax.jit(jax.shard_map(lambda x, w1, w2: jax.lax.psum(jax.nn.relu(x @ w1) @ w2, "model"), mesh=MESH,
                            in_specs=(P(), P(None, "model"), P("model", None)), out_specs=P()))
SEEN = {}


def tensor_parallel_mlp(x, w1, w2):
    key = (x.shape, w1.shape)
    if key not in SEEN:
        compiled = MLP.lower(x, w1, w2).compile()
        SEEN[key] = (compiled.cost_analysis(), compiled.memory_analysis(), len(compiled.as_text()),
                     compiled._executable.unsafe_call)
    return MLP(x, w1, w2)
