# expect: structure
"""jax.sharding.reshard of w to P() on an Explicit mesh, but eagerly, before the jitted
forward: the forward is handed all of w on every device, so every device holds a full copy
between the two programs, which FSDP exists to avoid."""
import jax
from jax.sharding import AxisType

MESH = jax.make_mesh((jax.device_count(),), ("data",), axis_types=(AxisType.Explicit,))


@jax.jit
def _forward(w_full, x):
    return jax.nn.relu(x @ w_full)


def fsdp_forward(w, x):
    with jax.set_mesh(MESH):
        w_stored = jax.device_put(w, jax.P("data", None))
        return w_stored, _forward(jax.sharding.reshard(w_stored, jax.P()), x)
