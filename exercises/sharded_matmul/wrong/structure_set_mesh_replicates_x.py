# expect: structure
"""jax.set_mesh with bare specs, but x placed with jax.P() too: every device multiplies all of
x, and the product is not split by rows."""
import jax

mesh = jax.make_mesh((8,), ("data",))


def sharded_matmul(x, w):
    with jax.set_mesh(mesh):
        return jax.device_put(x, jax.P()) @ jax.device_put(w, jax.P())
