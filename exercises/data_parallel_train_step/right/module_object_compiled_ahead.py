"""A Flax-NNX-like style: a Trainer object whose __call__ is the step, jitted from the object,
compiled ahead of time once per input structure and kept; shardings as jax.sharding objects
built once."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


class Trainer:
    def __init__(self, learning_rate):
        self.learning_rate = learning_rate
        mesh = Mesh(np.array(jax.devices()), ("data",))
        self.replicated = NamedSharding(mesh, P())
        self.rows = NamedSharding(mesh, P("data"))
        self._compiled = {}

    def loss(self, params, batch):
        out = batch["x"] @ params["dense"]["kernel"] + params["dense"]["bias"]
        return jnp.mean(jnp.square(out - batch["y"]))

    def __call__(self, params, batch):
        grads = jax.grad(self.loss)(params, batch)
        return jax.tree.map(lambda p, g: p - self.learning_rate * g, params, grads)

    def step(self, params, batch):
        params = jax.device_put(params, self.replicated)
        batch = jax.device_put(batch, self.rows)
        key = jax.tree.structure((params, batch)), tuple(np.shape(v) for v in jax.tree.leaves((params, batch)))
        if key not in self._compiled:
            self._compiled[key] = jax.jit(self).lower(params, batch).compile()
        return self._compiled[key](params, batch)


_TRAINER = Trainer(0.1)


def train_step(params, batch):
    return _TRAINER.step(params, batch)
