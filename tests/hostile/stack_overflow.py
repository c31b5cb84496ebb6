"""Lifts the recursion limit, then recurses in C (the repr of a deeply nested list) until
the C stack overflows: the process dies with SIGSEGV."""
import sys

sys.setrecursionlimit(10**8)


def replicated_sharding_value(x):
    nested = []
    for _ in range(200_000):
        nested = [nested]
    return repr(nested)
