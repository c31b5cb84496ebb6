"""jax.lax.with_sharding_constraint inside jit.

Write row_energies(x), where x is a float32 matrix whose number of rows is a multiple of 8.
Inside a function decorated with (or wrapped in) jax.jit:

1. compute the element-wise square y = m * m of its argument;
2. constrain y with jax.lax.with_sharding_constraint(y, NamedSharding(mesh,
   PartitionSpec('data', None))), where mesh is a one-dimensional mesh over all devices with
   the axis name 'data';
3. return the sum of each row of the constrained y.

row_energies(x) returns what the jitted function returns for x. The grader runs it with 8
simulated CPU devices and checks the values and the constraint in the traced program.
Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def row_energies(x: jax.Array) -> jax.Array:
    # Your code here: a jitted function that squares, constrains, and sums each row.
    raise NotImplementedError("row_energies is not written yet")
