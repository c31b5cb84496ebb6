"""Forged records of a jitted call's shardings and of a shard_map's in_specs (issue #55 point 7),
one wrong solution for each of two exercises, and a sys.setprofile hook that rewrites the
child's reply as it is framed so that it names the layout the exercise asks for: the cheap
placements (``via`` jit_in, shard_map_in) and the equations of the call's program and of the
traced one. The account handed to the witness is left as it ran.

- jit_shardings (``column_sums``): the jit's in_shardings replicate x over every device
  (wrong/structure_replicated_input); the record says x enters split by rows.
- tensor_parallel_mlp: w1 enters the shard_map whole on every device (in_specs P() for it),
  each device slicing its own columns out of it by axis_index (the right numbers, the one
  psum, but w1 not split); the record says PartitionSpec(None, 'model')."""
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

DATA = Mesh(np.array(jax.devices()), ("data",))
SUM_ROWS = jax.jit(lambda m: jnp.sum(m, axis=0), in_shardings=NamedSharding(DATA, P()),
                   out_shardings=NamedSharding(DATA, P()))
MODEL = Mesh(np.array(jax.devices()), ("model",))
RAN = [[], [], ["model", None]]
CLAIMED = [[], [None, "model"], ["model", None]]


def _local(x, w1, w2_block):
    width = w2_block.shape[0]
    w1_block = jax.lax.dynamic_slice_in_dim(w1, jax.lax.axis_index("model") * width, width, axis=1)
    return jax.lax.psum(jax.nn.relu(x @ w1_block) @ w2_block, "model")


LAYER = jax.jit(jax.shard_map(_local, mesh=MODEL, in_specs=(P(), P(), P("model", None)), out_specs=P()))


def _by_rows(sharding):
    if isinstance(sharding, dict) and sharding.get("type") == "NamedSharding" and sharding.get("spec") == []:
        sharding["spec"] = ["data", None]


def _rewrite(value):
    if isinstance(value, dict):
        if value.get("via") == "jit_in":
            _by_rows(value.get("sharding"))
        if isinstance(value.get("in_shardings"), list):
            for sharding in value["in_shardings"]:
                _by_rows(sharding)
        if value.get("in_specs") == RAN:
            value["in_specs"] = [list(spec) for spec in CLAIMED]
        for key, inner in value.items():
            if key != "account":
                _rewrite(inner)
    elif isinstance(value, list):
        specs = [v for v in value if isinstance(v, dict) and v.get("via") == "shard_map_in"]
        for index, placement in enumerate(specs):  # in_specs in order: x, w1, w2 for each shard_map
            placement["sharding"]["spec"] = list(CLAIMED[index % 3])
        for inner in value:
            _rewrite(inner)


def _edit(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "frame":
        message = frame.f_locals.get("message")
        if isinstance(message, dict):
            _rewrite(message)


sys.setprofile(_edit)


def column_sums(x):
    return SUM_ROWS(x)


def tensor_parallel_mlp(x, w1, w2):
    return LAYER(x, w1, w2)
