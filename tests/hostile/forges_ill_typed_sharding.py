"""Takes over its channel and answers every call with a well-formed reply whose descriptions
are ill-typed: a placement's mesh devices that are a number, a spec that is a number, a
returned array's shards that are not shards. The checks read those field by field."""
import json
import os
import struct
import sys

BAD = {"type": "NamedSharding", "mesh_devices": 5, "spec": 7, "axis_names": 3, "mesh_shape": "x", "memory_kind": 4}


def replicated_sharding_value(x):
    body = json.dumps({
        "ok": True, "placements": [{"via": "device_put", "operand": "x", "sharding": BAD}], "jit_calls": [], "host": [],
        "value": {"leaves": [{"path": "result", "type": "jax.Array", "kind": "jax_array", "dtype": "float32", "shape": [],
                              "sharding": BAD, "shards": [{"device": "a", "index": 3}],
                              "array": {"dtype": "<f4", "shape": [], "b64": "AAAAAA=="}}]},
        "program": {"nodes": [], "inputs": [], "outputs": [], "input_paths": [], "output_paths": []}}).encode()
    os.write(int(sys.argv[2]), struct.pack("!I", len(body)) + body)
    os._exit(0)
