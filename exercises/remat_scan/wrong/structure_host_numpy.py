# expect: structure
"""The backward pass written in NumPy, called from the jitted function through a host callback."""
import jax
import numpy as np


def numpy_grad(ws, x):
    ws, cs = np.asarray(ws), [np.asarray(x)]
    for w in ws:
        cs.append(np.tanh(cs[-1] @ w))
    grads, dc = np.zeros_like(ws), 2 * cs[-1]
    for i in reversed(range(len(ws))):
        dz = dc * (1 - cs[i + 1] ** 2)
        grads[i] = cs[i].T @ dz
        dc = dz @ ws[i].T
    return grads.astype(np.float32)


@jax.jit
def loss_grad(ws, x):
    return jax.pure_callback(numpy_grad, jax.ShapeDtypeStruct(ws.shape, ws.dtype), ws, x)
