"""Takes over its channel and answers the grader's call with a "successful" reply whose every
field has the wrong type (a recorded program that is a number, jit calls that are a string)."""
import json
import os
import struct
import sys


def replicated_sharding_value(x):
    body = json.dumps({"ok": True, "value": {"leaves": []}, "placements": [], "program": {"events": 5},
                       "jit_calls": "many", "host": 7, "swapped": "all", "intact": "no"}).encode()
    os.write(int(sys.argv[2]), struct.pack("!I", len(body)) + body)
    os._exit(0)
