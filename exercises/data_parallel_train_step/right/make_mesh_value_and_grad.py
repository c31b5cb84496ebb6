"""jax.make_mesh with an Explicit axis, value_and_grad (the loss is printed, not returned), the
worked example's habits (printing .sharding, block_until_ready), and the gradient written by
hand for the kernel and bias to check jax.grad."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

LEARNING_RATE = 0.1


def loss_fn(params, batch):
    layer = params["dense"]
    residual = batch["x"] @ layer["kernel"] + layer["bias"] - batch["y"]
    return jnp.mean(residual * residual)


@jax.jit
def update(params, batch):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    new_params = jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    return new_params, loss


def train_step(params, batch):
    mesh = jax.make_mesh((len(jax.devices()),), ("data",), axis_types=(AxisType.Explicit,))
    params = jax.device_put(params, NamedSharding(mesh, P()))
    batch = jax.device_put(batch, NamedSharding(mesh, P("data")))
    print("x:", batch["x"].sharding, "kernel:", params["dense"]["kernel"].sharding)
    new_params, loss = update(params, batch)
    new_params = jax.block_until_ready(new_params)
    print("loss before the step:", float(loss))
    return new_params
