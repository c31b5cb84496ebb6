"""jax.make_mesh (Explicit axes): shard_map then wants its operands placed as in_specs say, so
they are placed first with jax.device_put; prints the shardings and waits for the output."""
import jax
from jax.sharding import NamedSharding, PartitionSpec as P

MESH = jax.make_mesh((8,), ("model",))
SPECS = (P(), P(None, "model"), P("model", None))


def _local(x, w1_block, w2_block):
    return jax.lax.psum(jax.nn.relu(x @ w1_block) @ w2_block, "model")


LAYER = jax.jit(jax.shard_map(_local, mesh=MESH, in_specs=SPECS, out_specs=P()))


def tensor_parallel_mlp(x, w1, w2):
    placed = [jax.device_put(a, NamedSharding(MESH, s)) for a, s in zip((x, w1, w2), SPECS)]
    for name, a in zip(("x", "w1", "w2"), placed):
        print(name, a.sharding.spec)
    out = LAYER(*placed)
    print("output:", out.sharding, out.block_until_ready().shape)
    return out
