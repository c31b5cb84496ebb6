"""The 2 x 2 mesh of jax.devices()[:4] set with `with jax.set_mesh(mesh):`, x placed with a bare
jax.P(); the number of devices read from the mesh in context."""
import jax

grid = jax.make_mesh((2, 2), ("data", "model"), devices=jax.devices()[:4])


def replicate_on_mesh(x):
    with jax.set_mesh(grid):
        placed = jax.device_put(x, jax.P())
        return placed * jax.sharding.get_mesh().size
