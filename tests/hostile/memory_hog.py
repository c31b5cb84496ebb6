"""Allocates without end (the sandbox's address-space limit stops it). The blocks are
reserved, not filled, so the test stays fast and light on a shared machine; the limit is on
the address space, so it stops them all the same."""
import numpy as np


def replicated_sharding_value(x):
    hoard = []
    while True:
        hoard.append(np.empty(256 << 20, dtype=np.uint8))
