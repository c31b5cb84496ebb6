"""The private channel between the grader and a sandboxed child.

Messages are length-prefixed JSON: nothing is ever unpickled, so a hostile child can send
the parent wrong data but never code. Arrays travel as dtype, shape and base64 bytes.
"""
from __future__ import annotations

import base64
import json
import os
import struct
from typing import Any

import numpy as np

from grader.errors import ChannelClosed

HEADER = struct.Struct("!I")
MAX_MESSAGE_BYTES = 64 << 20


# The real floats NumPy knows only through ml_dtypes (JAX's dependency): their ``dtype.str`` is
# an anonymous void ('<V2'), so they travel by name and are decoded as the numbers they are.
# A returned array of one of them travels widened to float32 (grader.child.server), so the
# grader's process never imports ml_dtypes (~0.5 s); arguments travel as they are.
EXTRA_FLOATS = ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def holds_reals(dtype: np.dtype) -> bool:
    """Bools, integers or real floats: NumPy's own or ml_dtypes' (bfloat16 has kind 'V')."""
    return dtype.kind in "biuf" or (dtype.kind == "V" and dtype.name in EXTRA_FLOATS)


def carries(dtype: np.dtype) -> bool:
    """The dtypes the channel carries as numbers: real ones (``holds_reals``) and complex."""
    return dtype.kind == "c" or holds_reals(dtype)


def encode_array(array: np.ndarray) -> dict[str, Any]:
    return {
        "dtype": array.dtype.name if array.dtype.name in EXTRA_FLOATS else array.dtype.str,
        "shape": list(array.shape),
        "b64": base64.b64encode(array.tobytes(order="C")).decode("ascii"),
    }


def decode_array(payload: dict[str, Any]) -> np.ndarray:
    name = payload["dtype"]
    if name in EXTRA_FLOATS:
        import ml_dtypes
        dtype = np.dtype(getattr(ml_dtypes, name))
    else:
        dtype = np.dtype(name)
    if dtype.hasobject:
        raise ValueError("object arrays are not accepted on the channel")
    shape = tuple(int(n) for n in payload["shape"])
    raw = base64.b64decode(payload["b64"], validate=True)
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def write_message(fd: int, message: dict[str, Any]) -> None:
    body = json.dumps(message, allow_nan=True).encode("utf-8")
    data = HEADER.pack(len(body)) + body
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exactly(fd: int, count: int) -> bytes:
    chunks = []
    while count:
        chunk = os.read(fd, min(count, 1 << 20))
        if not chunk:
            raise ChannelClosed("the channel closed mid-message")
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def read_message(fd: int) -> dict[str, Any]:
    (length,) = HEADER.unpack(_read_exactly(fd, HEADER.size))
    if length > MAX_MESSAGE_BYTES:
        raise ChannelClosed(f"a message of {length} bytes exceeds the channel's limit")
    message = json.loads(_read_exactly(fd, length).decode("utf-8"))
    if not isinstance(message, dict):
        raise ChannelClosed("a message on the channel was not a JSON object")
    return message
