"""Sums x without placing it, and wraps re.match at import (the grader's code in the child reads
XLA's HLO text with the standard library's re: a wrapper there could make every float32 count
0 bits). The wrapper changes nothing it returns; the unplaced sum fails the placement checks
for what it is."""
import re

import jax.numpy as jnp

real_match = re.match
re.match = lambda pattern, string, *args: real_match(pattern, string, *args)


def replicated_sharding_value(x):
    return jnp.sum(x, dtype=jnp.float32)
