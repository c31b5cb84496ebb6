"""Ends the process while being imported, skipping every handler."""
import os

os._exit(3)


def replicated_sharding_value(x):
    return x
