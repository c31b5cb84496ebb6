"""The jitted function a callable object holding its sharding (a module's __call__)."""
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
class Energies:
    def __init__(self):
        self.rows = NamedSharding(Mesh(np.array(jax.devices()), ("data",)), P("data", None))
    def __call__(self, m):
        y = jax.lax.with_sharding_constraint(m * m, self.rows)
        return y.sum(axis=1)
row_energies = jax.jit(Energies())
