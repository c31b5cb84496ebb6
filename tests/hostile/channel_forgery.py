"""Writes straight to the grader's channel (its descriptor number is on the command line) a
message nested so deeply that a naive JSON parser overflows its stack: the grader must
survive it. (A well-formed forged reply is the documented limit of observing inside the
submission's own process: docs/threat-model.md.)"""
import os
import struct
import sys


def replicated_sharding_value(x):
    payload = b"[" * 200_000 + b"]" * 200_000
    os.write(int(sys.argv[2]), struct.pack("!I", len(payload)) + payload)
    return x.sum()
