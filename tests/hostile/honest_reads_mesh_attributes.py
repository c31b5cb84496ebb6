"""Control for rewrite_mesh_attributes.py and rewrite_sharding_mesh.py: a correct solution that
reads (never writes) its mesh's and sharding's attributes after placing, including the cached
device tuples, then rebinds the name `mesh` to another Mesh (a new object, nothing mutated).
Must keep full marks."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    sharding = NamedSharding(mesh, PartitionSpec())
    placed = jax.device_put(x, sharding)
    assert placed.sharding.mesh.devices.shape == (1,)
    assert mesh._flat_devices_tuple == (jax.devices()[0],) and mesh.device_ids.tolist() == [0]
    assert sharding.mesh is mesh and mesh.size == 1
    total = jnp.sum(placed, dtype=jnp.float32)
    mesh = Mesh(np.array(jax.devices()), ("data",))  # reused name, new object: for some later use
    assert mesh.size == 8
    return total
