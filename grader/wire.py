"""The private channel between the grader and a sandboxed child: the one wire both sides use.

Framing: messages are length-prefixed JSON (``frame``, ``write_message``, ``read_message``):
nothing is ever unpickled, so a hostile child can send the parent wrong data but never code.
One array codec (``encode_array``, ``decode_array``): arrays travel as dtype, shape and base64
bytes, both ways (the arguments ``grader.arguments.encode`` sends, the values the child
returns). The replies the child sends are typed below (``LoadReply``, ``CallReply``,
``TraceReply`` and their entries): the child (``grader.child``) constructs them, the parent
(``grader.observe.returned``, ``grader.observe.session``) checks every field before use, as a
submission can write to its own channel. The child imports this module and ``grader.errors``
only, so it depends on nothing else of the grader's.
"""
from __future__ import annotations

import base64
import json
import os
import struct
from typing import Any, Literal, Mapping, NotRequired, TypedDict, Union

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


class ArrayData(TypedDict):
    dtype: str  # ``dtype.str``, or the name of one of EXTRA_FLOATS
    shape: list[int]
    b64: str  # the C-order bytes


def encode_array(array: np.ndarray) -> ArrayData:
    return {
        "dtype": array.dtype.name if array.dtype.name in EXTRA_FLOATS else array.dtype.str,
        "shape": list(array.shape),
        "b64": base64.b64encode(array.tobytes(order="C")).decode("ascii"),
    }


def decode_array(payload: ArrayData) -> np.ndarray:
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


def frame(message: Mapping[str, Any]) -> bytes:
    """The bytes of one message on the channel: its length, then its JSON."""
    body = json.dumps(message, allow_nan=True).encode("utf-8")
    return HEADER.pack(len(body)) + body


def write_message(fd: int, message: Mapping[str, Any]) -> None:
    view = memoryview(frame(message))
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


# -- what the child sends ------------------------------------------------------------------------
class Ready(TypedDict):
    """The child's greeting, once it is confined and before any request."""
    op: Literal["ready"]
    jax: str
    devices: list[str]
    platform: str  # JAX's backend in the child: "cpu" (JAX_PLATFORMS), never an accelerator's
    protections: dict[str, dict[str, Any]]  # per protection: ``active`` and a ``detail`` sentence
    memory_limit: int


class Failed(TypedDict):
    """Instead of the greeting: the child could not start."""
    op: Literal["failed"]
    error: str


class Skipped(TypedDict):
    """A notebook cell skipped because it failed: its number, the line in it, the error's first line."""
    cell: int
    line: int | None
    error: str


class LoadReply(TypedDict):
    """``load``: the function found (``signature``, ``accepts``), or the ``stage`` that failed
    (syntax, read, import, function, not_callable, factory) and what it says."""
    ok: bool
    signature: NotRequired[str]
    accepts: NotRequired[bool]
    stage: NotRequired[str]
    error: NotRequired[str]
    exception: NotRequired[str]
    line: NotRequired[int | None]  # syntax: the line; text: its source
    text: NotRequired[str]
    defined: NotRequired[list[str]]  # function: the callables the file does define
    type: NotRequired[str]  # not_callable: what the name is instead
    made_by: NotRequired[str]  # the factory that made the graded function
    cell: NotRequired[int]  # import: the notebook cell that failed, and whether the function needs it
    needed: NotRequired[bool]
    skipped: NotRequired[list[Skipped]]
    skipped_count: NotRequired[int]


class Placement(TypedDict):
    """A placement a call made: ``via`` (device_put, jit_in, jit_out, shard_map_in), of which
    argument leaf (``operand``, by path; None when none), onto which ``sharding`` (described)."""
    via: str
    operand: str | None
    sharding: dict[str, Any]


class LeafData(TypedDict):
    """One returned leaf: ``kind`` jax_array, numpy, python or other; an array's numbers travel
    in ``array`` (EXTRA_FLOATS widened to float32) when the channel carries them."""
    path: str
    type: str
    kind: str
    sharding: NotRequired[dict[str, Any]]
    shards: NotRequired[list[dict[str, Any]]]  # jax_array: device and [start, stop) per dimension
    dtype: NotRequired[str]
    shape: NotRequired[list[int]]
    array: NotRequired[ArrayData]
    repr: NotRequired[str]  # other: its repr, bounded


class ValueData(TypedDict):
    leaves: list[LeafData]


class RecompiledData(TypedDict):
    """Why a jitted function was traced or compiled again (``grader.observe.returned.Recompiled``)."""
    what: str
    argument: str
    before: str
    after: str


class JitCallData(TypedDict):
    """One call of a jitted function (``grader.observe.returned.JitCall``)."""
    name: str
    status: str  # traced, compiled or cached
    compiles: int
    again: NotRequired[RecompiledData]
    function: str
    own: bool
    donated: list[str]
    reused: list[str]
    donated_leaves: list[str]
    reused_leaves: list[str]


class HostData(TypedDict):
    """Host work amid the call's JAX work: ``kind`` callback, custom_rule or round_trip."""
    kind: str
    call: str


class CollectiveData(TypedDict):
    kind: str  # as XLA names it: all-reduce, all-gather, ...
    bytes: int


class MemoryData(TypedDict):
    argument: int
    output: int
    temp: int
    alias: int


class CompiledFacts(TypedDict):
    """What XLA made of one program, per device (``grader.child.compiled.facts``)."""
    collectives: list[CollectiveData]
    memory: MemoryData


class ProgramData(CompiledFacts):
    """One XLA program a fully recorded call ran (``grader.observe.returned.CompiledProgram``)."""
    name: str
    function: str
    own: bool
    runs: int


class CallReply(TypedDict):
    """``call``: what came back and what the call did, or what it raised; ``program`` (the
    program graph of ``grader.child.jaxpr_graph``) and ``programs`` in a full record only,
    ``swapped`` in a counterfactual call only."""
    ok: bool
    exception: NotRequired[str]
    error: NotRequired[str]
    value: NotRequired[ValueData]
    placements: list[Placement]
    intact: NotRequired[bool]
    jit_calls: NotRequired[list[JitCallData]]
    host: NotRequired[list[HostData]]
    swapped: NotRequired[int]
    programs: NotRequired[list[ProgramData]]
    program: NotRequired[dict[str, Any]]


class TraceReply(TypedDict):
    """``trace``: the program graph ``jax.make_jaxpr`` recorded, or what it raised."""
    ok: bool
    program: NotRequired[dict[str, Any]]
    exception: NotRequired[str]
    error: NotRequired[str]


class RefusedReply(TypedDict):
    """A request the child could not serve: an unknown one, or the grader's own code failing
    inside the child (``internal``)."""
    ok: Literal[False]
    error: str
    internal: NotRequired[Literal[True]]


Reply = Union[LoadReply, CallReply, TraceReply, RefusedReply]
