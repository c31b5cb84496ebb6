"""jax.make_mesh with an Explicit axis (so grads is placed on the mesh first), in_specs and
out_specs written leaf by leaf, and the habits of the worked examples: printing shardings and
waiting for the result."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec

MESH = jax.make_mesh((len(jax.devices()),), ("data",), axis_types=(AxisType.Explicit,))
IN_SPECS = {"kernel": PartitionSpec("data", None, None), "bias": PartitionSpec("data", None)}
OUT_SPECS = {"kernel": PartitionSpec(), "bias": PartitionSpec()}


def _per_device(block):
    return jax.lax.pmean(jax.tree.map(lambda g: jnp.squeeze(g, axis=0), block), axis_name="data")


AVERAGE = jax.jit(jax.shard_map(_per_device, mesh=MESH, in_specs=(IN_SPECS,), out_specs=OUT_SPECS))


def average_gradients(grads):
    placed = jax.device_put(grads, {name: NamedSharding(MESH, spec) for name, spec in IN_SPECS.items()})
    print({name: leaf.sharding.spec for name, leaf in placed.items()})
    averaged = AVERAGE(placed)
    jax.block_until_ready(averaged)
    return averaged
