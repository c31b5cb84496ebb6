# expect: structure
"""jax.set_mesh over a 2 x 4 mesh of all 8 devices (jax.make_mesh's default devices) where the
task asks for jax.devices()[:4] as 2 x 2; multiplying by the mesh's size would be 8, so the
submission multiplies by 4 and the values come out right."""
import jax

mesh = jax.make_mesh((2, 4), ("data", "model"))


def replicate_on_mesh(x):
    with jax.set_mesh(mesh):
        return jax.device_put(x, jax.P()) * 4
