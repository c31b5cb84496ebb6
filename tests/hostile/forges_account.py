"""Deliberate forgery of the account the child hands the witness (grader.child.account): finds
the child's server through the garbage collector and wraps the method that builds the account,
so that what it places is a constant of zeros instead of x. The function itself
is the seed exercise's honest answer; the account it hands over no longer computes it."""
import base64
import gc

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def _forge() -> None:
    for obj in gc.get_objects():
        if type(obj).__name__ == "Child" and callable(getattr(obj, "account_of_call", None)):
            honest = obj.account_of_call

            def forged(events, leaves, *args, **kwargs):
                account = honest(events, leaves, *args, **kwargs)
                zeros = np.zeros(np.shape(leaves[0][1]), np.float32)
                constants = account.setdefault("constants", [])
                constants.append({"array": {"dtype": "<f4", "shape": list(zeros.shape),
                                            "b64": base64.b64encode(zeros.tobytes()).decode()},
                                  "sharding": {"type": "default"}})
                for step in account.get("steps", []):
                    if step.get("kind") == "place":
                        step["reads"] = [["constant", len(constants) - 1]]
                return account
            obj.account_of_call = forged
            return


def replicated_sharding_value(x):
    _forge()
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, PartitionSpec()))
    return jnp.sum(placed, dtype=jnp.float32)
