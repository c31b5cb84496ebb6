"""The frames ``jaxgrade check`` and its warm service exchange over their Unix socket: a tag
byte, a 4-byte length, the body. The client sends one request (``REQUEST``, JSON); the service
answers ``ACCEPTED`` at once (a client that hears nothing soon grades in-process), then the
report's bytes as the CLI would have written them (``STDOUT``, ``STDERR``, in order) and
``EXIT`` with the exit code, or ``REFUSED`` (the client then grades in-process). Both sides are
the same user's processes (SO_PEERCRED): the limits only keep a confused peer from costing
much, they are no defence against a hostile one."""
from __future__ import annotations

import socket
import struct

from grader.errors import WarmServiceError

PROTOCOL = 1
REQUEST, ACCEPTED, REFUSED, STDOUT, STDERR, EXIT = b"q", b"a", b"n", b"1", b"2", b"x"
_HEAD = struct.Struct(">cI")
MAX_BODY = 64 << 20  # a report (HTML, a large counterexample) is far smaller


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


def receive(connection: socket.socket) -> tuple[bytes, bytes]:
    """The next frame (tag, body); WarmServiceError on a closed connection or a malformed frame,
    socket.timeout past the connection's timeout."""
    tag, length = _HEAD.unpack(_exactly(connection, _HEAD.size))
    if length > MAX_BODY:
        raise WarmServiceError(f"a frame of {length} bytes")
    return tag, _exactly(connection, length)


def peer_uid(connection: socket.socket) -> int:
    """The uid of the process at the other end (SO_PEERCRED: the kernel's word, not the peer's)."""
    creds = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]
