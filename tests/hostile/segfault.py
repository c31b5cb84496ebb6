"""Dereferences a null pointer in the call: the process dies with SIGSEGV."""
import ctypes


def replicated_sharding_value(x):
    return ctypes.string_at(0)
