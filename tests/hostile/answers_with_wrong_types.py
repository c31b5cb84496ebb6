"""Takes over its channel while it is imported and answers every request itself with
well-formed JSON whose fields have the wrong types (a number where a string is expected): the
submission's doing, its failure with exit 1, never "the grader failed" (issue #55)."""
import json
import os
import struct
import sys

INBOX, OUTBOX = int(sys.argv[1]), int(sys.argv[2])


def _read(count):
    data = b""
    while len(data) < count:
        chunk = os.read(INBOX, count - len(data))
        if not chunk:
            os._exit(0)
        data += chunk
    return data


def _send(message):
    body = json.dumps(message).encode()
    os.write(OUTBOX, struct.pack("!I", len(body)) + body)


# the import's own reply, then every later request's
_send({"ok": False, "stage": "syntax", "error": 3, "text": 9, "line": "one"})
while True:
    (length,) = struct.unpack("!I", _read(4))
    _read(length)
    _send({"ok": True, "placements": 5, "value": {"leaves": [{"path": 1, "kind": "jax_array", "type": 2}]},
           "error": 8, "exception": 9})


def replicated_sharding_value(x):
    return x.sum()
