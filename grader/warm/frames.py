"""The frames a client (``jaxgrade check``, or ``grader.check()`` in a kernel) and the warm
service exchange over their Unix socket: a tag byte, a 4-byte length, the body. The client
sends one request (``REQUEST``, JSON, its ``kind`` "check" or "cells"); the service answers
``ACCEPTED`` at once (a client that hears nothing soon grades in-process), or ``REFUSED`` (the
client then grades in-process). For a "check", then the report's bytes as the CLI would have
written them (``STDOUT``, ``STDERR``, in order) and ``EXIT`` with the exit code; for "cells"
(grader.notebook.warm_cells), ``REPORT`` with the report as JSON data, or ``REFUSED`` where the grading
failed (the kernel grades the cells itself, and says what failed). Both sides are the same
user's processes (SO_PEERCRED): the limits keep a request from costing the service much, and
what a request holds is checked field by field (grader.notebook.warm_cells.read)."""
from __future__ import annotations

import socket
import struct

from grader.errors import WarmServiceError

PROTOCOL = 2
REQUEST, ACCEPTED, REFUSED, STDOUT, STDERR, EXIT, REPORT = b"q", b"a", b"n", b"1", b"2", b"x", b"r"
# What every request holds, whatever its kind: the service answers only its own protocol, name
# and environment (grader.warm.place).
ENVELOPE = frozenset({"protocol", "key", "env"})
_HEAD = struct.Struct(">cI")
MAX_BODY = 64 << 20  # a report (HTML, a large counterexample) is far smaller
MAX_REQUEST = 16 << 20  # a notebook check's cells (grader.notebook.warm_cells.MAX_CHARACTERS) at 6 bytes each (\uXXXX)


def send(connection: socket.socket, tag: bytes, body: bytes = b"") -> None:
    connection.sendall(_HEAD.pack(tag, len(body)) + body)


def _exactly(connection: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = connection.recv(min(size - len(data), 1 << 20))
        if not chunk:
            raise WarmServiceError("the other side closed the connection")
        data += chunk
    return bytes(data)


def receive(connection: socket.socket, most: int = MAX_BODY) -> tuple[bytes, bytes]:
    """The next frame (tag, body); WarmServiceError on a closed connection or a frame whose body
    is over ``most`` bytes, socket.timeout past the connection's timeout."""
    tag, length = _HEAD.unpack(_exactly(connection, _HEAD.size))
    if length > most:
        raise WarmServiceError(f"a frame of {length} bytes")
    return tag, _exactly(connection, length)


def peer_uid(connection: socket.socket) -> int:
    """The uid of the process at the other end (SO_PEERCRED: the kernel's word, not the peer's)."""
    creds = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]
