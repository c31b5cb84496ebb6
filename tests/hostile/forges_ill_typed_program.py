"""Takes over its channel and answers every call with a well-formed reply whose recorded
program is ill-typed where it is read with attribute access (an abstract value that is a list)."""
import json
import os
import struct
import sys


def replicated_sharding_value(x):
    body = json.dumps({
        "ok": True, "placements": [], "jit_calls": [], "host": [],
        "value": {"leaves": [{"path": "result", "type": "jax.Array", "kind": "numpy", "dtype": "float32", "shape": [],
                              "array": {"dtype": "<f4", "shape": [], "b64": "AAAAAA=="}}]},
        "program": {"nodes": [], "avals": {"0": []}, "inputs": [0], "outputs": [], "input_paths": ["x"],
                    "output_paths": []}}).encode()
    os.write(int(sys.argv[2]), struct.pack("!I", len(body)) + body)
    os._exit(0)
