"""Takes over its channel and answers the grader's call with one message just under the size
limit (64 MiB) that costs as much memory decoded as it can: {SHAPE}. empty_lists: a list of
22 million empty lists (1.7 GiB decoded); short_strings: a list of 13 million two-letter
strings; under_budget: as many one-entry objects as the channel takes (each key its own),
beside one string that fills the rest. The grader must refuse or survive each within its
memory bound, and judge it the submission's doing."""
import os
import struct
import sys

LIMIT = 64 << 20
VALUES = 349_000  # under_budget: about this many values; the grader takes 349,525 in 64 MiB


def _write(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def replicated_sharding_value(x):
    fd = int(sys.argv[2])
    shape = "{SHAPE}"
    if shape == "under_budget":
        objects = b",".join(b'{"k%d":0}' % i for i in range(VALUES // 3))
        head = b'{"ok":true,"placements":[' + objects + b'],"error":"'
        body = head + b"x" * (LIMIT - 64 - len(head)) + b'"}'
        _write(fd, struct.pack("!I", len(body)) + body)
        os._exit(0)
    item = {"empty_lists": b"[]", "short_strings": b'"ab"'}[shape]
    chunk = (item + b",") * ((1 << 20) // (len(item) + 1))
    chunks = (LIMIT - 64) // len(chunk)
    _write(fd, struct.pack("!I", 1 + chunks * len(chunk) + len(item) + 1) + b"[")
    for _ in range(chunks):
        _write(fd, chunk)
    _write(fd, item + b"]")
    os._exit(0)
