# expect: structure
"""Both operands cast, no preferred_element_type, the bfloat16 product cast to float32, all under
jax.jit. The program asks for bfloat16 sums; XLA's CPU backend computes the dot in float32 and
drops the bfloat16 round trip, so on the grader's CPU the numbers come out right, and only the
program shows the bfloat16 accumulation (an accelerator would sum in bfloat16)."""
import jax
import jax.numpy as jnp


@jax.jit
def mixed_precision_matmul(x, w):
    return (x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)).astype(jnp.float32)
