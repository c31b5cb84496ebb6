# expect: structure
"""No placement at all: x @ w gives the right numbers and splits nothing."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec



def sharded_matmul(x, w):
    return x @ w
