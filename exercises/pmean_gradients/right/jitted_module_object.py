"""A module-like object whose __call__ runs the shard_map, jitted from the object."""
import jax, numpy as np
from jax.sharding import Mesh, PartitionSpec as P
class Averager:
    def __init__(self):
        self.mesh = Mesh(np.array(jax.devices()), ("data",))
    def body(self, grads):
        return jax.tree.map(lambda b: jax.lax.pmean(b[0], "data"), grads)
    def __call__(self, grads):
        return jax.shard_map(self.body, mesh=self.mesh, in_specs=P("data"), out_specs=P())(grads)
_AVG = jax.jit(Averager())
def average_gradients(grads):
    return _AVG(grads)
