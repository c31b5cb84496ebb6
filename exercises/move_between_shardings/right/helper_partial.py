"""One helper builds a sharding over a slice of the devices; the placements are
functools.partial(jax.device_put, device=...), with P for the spec."""
from functools import partial

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


def split_over(devices):
    return NamedSharding(Mesh(np.asarray(devices).reshape(len(devices)), ("data",)), P("data"))


to_first = partial(jax.device_put, device=split_over(jax.devices()[:4]))
to_second = partial(jax.device_put, device=split_over(jax.devices()[4:]))


def move_to_second_half(x):
    return to_second(to_first(x))
