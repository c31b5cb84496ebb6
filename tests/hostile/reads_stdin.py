"""Waits for input that never comes (stdin is /dev/null, so it ends at once)."""
import sys

rest = sys.stdin.read()
answer = input("your answer? ")


def replicated_sharding_value(x):
    return x
