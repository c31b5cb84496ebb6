"""Both meshes from jax.make_mesh (Explicit axes) with explicit device lists; shardings built once."""
import jax
from jax.sharding import NamedSharding, PartitionSpec

FIRST = NamedSharding(jax.make_mesh((4,), ("data",), devices=jax.devices()[:4]), PartitionSpec("data"))
SECOND = NamedSharding(jax.make_mesh((4,), ("data",), devices=jax.devices()[4:]), PartitionSpec("data"))


def move_to_second_half(x: jax.Array) -> jax.Array:
    return jax.device_put(jax.device_put(x, FIRST), SECOND)
