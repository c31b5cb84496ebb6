"""Takes over its channel and answers the grader's call with well-typed JSON of the wrong
shape (a "successful" reply whose value is not a description of a value): this is the
submission's doing, a broken channel, never "the grader failed"."""
import json
import os
import struct
import sys


def replicated_sharding_value(x):
    body = json.dumps({"ok": True, "value": {"leaves": [{"path": "result", "kind": 12}]},
                       "placements": "everywhere"}).encode()
    os.write(int(sys.argv[2]), struct.pack("!I", len(body)) + body)
    os._exit(0)
