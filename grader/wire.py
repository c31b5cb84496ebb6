"""The private channel between the grader and a sandboxed child: the one wire both sides use.

Framing: messages are length-prefixed JSON (``frame``, ``write_message``, ``read_message``):
nothing is ever unpickled, so a hostile child can send the parent wrong data but never code.
Nor can it make the parent decode more than a reply can hold: ``decode_message`` checks a
message's size and shape (how many JSON values it holds) on its bytes before decoding them,
since ``json.loads`` of 64 MiB of ``[[],[],...`` builds 22 million lists (1.7 GiB).
One array codec (``encode_array``, ``decode_array``): arrays travel as dtype, shape and base64
bytes, both ways (the arguments ``grader.arguments.encode`` sends, the values the child
returns). The replies the child sends are typed below (``LoadReply``, ``CallReply``,
``TraceReply`` and their entries): the child (``grader.child``) constructs them, and the types
are the schema the parent (``grader.observe.session``) checks each reply against where it
decodes it (``REPLIES``, ``check_schema``), as a submission can write to its own channel. The child imports this module and ``grader.errors``
only, so it depends on nothing else of the grader's.
"""
from __future__ import annotations

import base64
import contextlib
import functools
import json
import os
import re
import struct
import threading
import types
from typing import (Any, Callable, Literal, Mapping, NotRequired, TypedDict, TypeVar, Union, get_args, get_origin,
                    get_type_hints, is_typeddict)

import numpy as np

from grader.errors import ChannelClosed, Malformed

HEADER = struct.Struct("!I")
MAX_MESSAGE_BYTES = 64 << 20
# What decoding one message may cost the reader, in bytes (``decoding_cost``): its text held as a
# str beside the strings decoded from it (twice its length), and each JSON value it holds
# (containers, strings, numbers, literals, object keys) at most VALUE_BYTES decoded (measured: a
# one-entry object with a key of its own, ~80). A full record of a call of 12,000 eager
# operations is 6 MB and 850,000 values (~90 MiB); a 64 MiB message may hold 350,000.
DECODE_BUDGET = 160 << 20
VALUE_BYTES = 96
# Messages larger than this are decoded one at a time in a process (a class run reads many
# children's channels from threads): at most one decoding's peak at once.
LARGE_MESSAGE_BYTES = 1 << 20
_large = threading.Lock()
# Where a value can begin (an array's first, each next element or key, an object's value): a
# message holds at most one more value than it has of these bytes outside its strings.
_BEFORE_VALUE = (b",", b":", b"[", b"{")
_STRING = re.compile(rb'"[^"]*"')
_WINDOW = 1 << 20


# The real floats NumPy knows only through ml_dtypes (JAX's dependency): their ``dtype.str`` is
# an anonymous void ('<V2'), so they travel by name and are decoded as the numbers they are.
# A returned array of one of them travels widened to float32 (grader.child.server), so the
# grader's process never imports ml_dtypes (~0.5 s); arguments travel as they are.
EXTRA_FLOATS = ("bfloat16", "float8_e4m3fn", "float8_e5m2")
# Every narrow number type of ml_dtypes (a legal result: jnp.int4, the float8 family, ...), by
# the NumPy type a returned array of it travels as (grader.child.server): one that holds each of
# its values exactly, so the grader compares the numbers the submission computed.
_NARROW_FLOATS = ("bfloat16", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
                  "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                  "float8_e5m3fnu", "float8_e8m0fnu")
WIDENED = {**{name: "float32" for name in _NARROW_FLOATS}, "int1": "int8", "int2": "int8", "int4": "int8",
           "uint1": "uint8", "uint2": "uint8", "uint4": "uint8", "bcomplex32": "complex64", "complex32": "complex64"}


def itemsize(name: str) -> int | None:
    """Bytes per element of the dtype a returned leaf names, as NumPy stores it: NumPy's own, or
    one of ml_dtypes' narrow types by name (one byte for the 1- to 8-bit ones, so the grader's
    process never imports ml_dtypes); None for a name NumPy cannot read (a structured dtype's)."""
    if name in WIDENED:
        return {"bfloat16": 2, "bcomplex32": 4, "complex32": 4}.get(name, 1)
    try:
        return np.dtype(name).itemsize
    except (TypeError, ValueError):
        return None


def holds_reals(dtype: np.dtype) -> bool:
    """Bools, integers or real floats: NumPy's own or ml_dtypes' (bfloat16 has kind 'V')."""
    return dtype.kind in "biuf" and dtype.name not in ("bcomplex32", "complex32") \
        or (dtype.kind == "V" and WIDENED.get(dtype.name, "complex") != "complex64")


def carries(dtype: np.dtype) -> bool:
    """The dtypes the channel carries as numbers: real ones (``holds_reals``) and complex."""
    return dtype.kind == "c" or holds_reals(dtype) or dtype.name in WIDENED


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


def fits(data: bytes) -> bool:
    """Whether the reader takes a framed message (``frame``): within the size limit and holding
    at most ``values_allowed`` values for its size. The child asks before sending a reply, so an
    honest one that does not fit is replaced by one that says why (``grader.child.server``)."""
    length = len(data) - HEADER.size
    allowed = values_allowed(length)
    return length <= MAX_MESSAGE_BYTES and values_bound(data, allowed, HEADER.size) <= allowed


def write_message(fd: int, message: Mapping[str, Any]) -> None:
    write_frame(fd, frame(message))


def write_frame(fd: int, data: bytes) -> None:
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
    try:
        return decode_message(bytearray(_read_exactly(fd, length)))
    except Malformed as error:
        raise ChannelClosed(str(error)) from None


T = TypeVar("T")


def _as_it_is(message: dict[str, Any]) -> Any:
    return message


def decoding_cost(length: int, values: int) -> int:
    """What decoding a message of ``length`` bytes holding ``values`` JSON values costs at most."""
    return 2 * length + VALUE_BYTES * values


def values_allowed(length: int) -> int:
    """How many JSON values a message of ``length`` bytes may hold within DECODE_BUDGET."""
    return max(0, (DECODE_BUDGET - 2 * length) // VALUE_BYTES)


def values_bound(body: bytes | bytearray, limit: int, start: int = 0) -> int:
    """At least as many JSON values as ``json.loads(body)`` would build before it returns or
    fails, read on the bytes without decoding them; counting stops once past ``limit``. First
    the bytes where a value can begin, strings included (no copy); only when those are more
    than ``limit``, again with the strings' insides left out, a window at a time (a few MiB
    of copies at most). ``start``: where the JSON begins in ``body``."""
    count = 1 + sum(body.count(byte, start) for byte in _BEFORE_VALUE)
    if count <= limit:
        return count
    count, inside, view = 1, False, memoryview(body)
    while start < len(body) and count <= limit:
        end = min(start + _WINDOW, len(body))
        while end < len(body) and body[end - 1] == 0x5C:  # never split an escape: end past every backslash run
            end += 1
        # An escape is a backslash and the byte after it, paired from the left: without the escaped
        # backslashes, then the escaped quotes, every quote left opens or closes a string.
        window = bytes(view[start:end]).replace(b"\\\\", b"").replace(b'\\"', b"")
        after = inside != (window.count(b'"') % 2 == 1)  # whether the window ends inside a string
        outside = _STRING.sub(b"", (b'"' if inside else b"") + window + (b'"' if after else b""))
        count += sum(outside.count(byte) for byte in _BEFORE_VALUE)
        inside, start = after, end
    return count


def decode_message(body: bytes | bytearray, keep: Callable[[dict[str, Any]], T] = _as_it_is) -> T:
    """The JSON object of one message's bytes, its shape checked before it is decoded (at most
    ``values_allowed`` values: ``values_bound``), as ``keep`` makes it the reader's own (the
    child's strings made safe: ``grader.observe.returned.safe_reply``). Raises
    :class:`Malformed` for what is not an object of that size. A bytearray is emptied once
    decoded to text, so that it is not held beside the text and the values while they are built;
    the text goes once decoded, and the decoded values once kept, all before a large message lets
    the next one be decoded: a class run reads many children at once, and what one of them left
    decoded beside another's decoding would add up to twice the budget (#41)."""
    if len(body) > MAX_MESSAGE_BYTES:
        raise Malformed(f"a message of {len(body)} bytes exceeds the channel's limit of {MAX_MESSAGE_BYTES}")
    with _large if len(body) > LARGE_MESSAGE_BYTES else contextlib.nullcontext():
        allowed = values_allowed(len(body))
        if values_bound(body, allowed) > allowed:
            raise Malformed(f"a message of {len(body):,} bytes holds more than the {allowed:,} JSON values the "
                            "channel takes in a message of its size")
        try:
            text = body.decode("utf-8")
            if isinstance(body, bytearray):
                body.clear()
            message = json.loads(text)
        except (ValueError, RecursionError) as error:  # RecursionError: "[[[[..." nested past the stack
            raise Malformed(f"a message is not JSON ({type(error).__name__})") from None
        del text
        if not isinstance(message, dict):
            raise Malformed("a message on the channel was not a JSON object")
        kept = keep(message)
        del message
    return kept


# -- what the child sends ------------------------------------------------------------------------
# Timings (``grader.timings``, JAXGRADE_TIMINGS=1): instants on the child's ``time.monotonic()``,
# durations in seconds. The parent keeps each only where it fits what it measured itself.
class StartTiming(TypedDict):
    first_line: float  # its first statement ran (grader.sandbox.process.boot)
    imported: float  # grader.child.entry imported (NumPy with it)
    jax: float  # JAX imported (a warm process's child: already was)
    set_up: float  # patched, recorder made, confined
    backend: float  # jax.devices() returned: the backend started
    sent: float  # the greeting about to be written


class LoadTiming(TypedDict):
    file_s: float  # running the submission's file (or its notebook's cells)


class CallTiming(TypedDict):
    run_s: float  # the function running, its results awaited
    compile_s: float  # of which XLA compiling, or reading the compilation cache


class Ready(TypedDict):
    """The child's greeting, once it is confined and before any request."""
    op: Literal["ready"]
    jax: str
    devices: list[str]
    platform: str  # JAX's backend in the child: "cpu" (JAX_PLATFORMS), never an accelerator's
    protections: dict[str, dict[str, Any]]  # per protection: ``active`` and a ``detail`` sentence
    memory_limit: int
    timing: NotRequired[StartTiming]


class Failed(TypedDict):
    """Instead of the greeting: the child could not start."""
    op: Literal["failed"]
    error: str


class Skipped(TypedDict):
    """A notebook cell skipped because it failed: its number, the line in it, the error's first line;
    ``stopped``: it ran out of the time the cells the function does not need have (or was not run)."""
    cell: int
    line: int | None
    error: str
    stopped: NotRequired[bool]


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
    timing: NotRequired[LoadTiming]


class Placement(TypedDict):
    """A placement a call made: ``via`` (device_put, jit_in, jit_out, shard_map_in), of which
    argument leaf (``operand``, by path; None when none), onto which ``sharding`` (described)."""
    via: str
    operand: str | None
    sharding: dict[str, Any]


class LeafData(TypedDict):
    """One returned leaf: ``kind`` jax_array, numpy, python or other; an array's numbers travel
    in ``array`` (ml_dtypes' narrow types widened, ``WIDENED``) when the channel carries them."""
    path: str
    type: str
    kind: LeafKind
    sharding: NotRequired[dict[str, Any]]
    typed_sharding: NotRequired[dict[str, Any]]  # jax_array: the sharding jax.typeof(x) states, if any
    shards: NotRequired[list[dict[str, Any]]]  # jax_array: device and [start, stop) per dimension
    dtype: NotRequired[str]
    shape: NotRequired[list[int]]
    array: NotRequired[ArrayData]
    repr: NotRequired[str]  # other: its repr, bounded


class ValueData(TypedDict):
    leaves: list[LeafData]


# The words some fields are limited to (``grader.observe.returned`` reads them as these).
LeafKind = Literal["jax_array", "numpy", "python", "other"]
JitStatus = Literal["traced", "compiled", "cached"]
RecompileCause = Literal["type", "static", "sharding", "arguments", "new_function", "other"]
HostKind = Literal["callback", "round_trip"]
CollectiveKind = Literal["all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all"]


class RecompiledData(TypedDict):
    """Why a jitted function was traced or compiled again (``grader.observe.returned.Recompiled``)."""
    what: RecompileCause
    argument: str
    before: str
    after: str


class JitCallData(TypedDict):
    """One call of a jitted function (``grader.observe.returned.JitCall``)."""
    name: str
    status: JitStatus
    compiles: int
    again: NotRequired[RecompiledData]
    function: str
    own: bool
    donated: list[str]
    reused: list[str]
    donated_leaves: list[str]
    reused_leaves: list[str]
    computes: NotRequired[list[str]]  # the returned leaves its program computed
    # leaves whose placed copy was donated and reused: one the submission placed (jax.device_put),
    # or one JAX placed on the jit's in_shardings (the leaf itself is kept)
    placed_reused: NotRequired[list[str]]


class CompilationData(TypedDict):
    """Programs XLA compiled during a call for one function, whatever route asked (a jitted
    call, ``.lower().compile()``): ``function`` (``step at solution.py:12``), ``own``, ``count``."""
    function: str
    own: bool
    count: int


class HostData(TypedDict):
    """Host work amid the call's JAX work: ``kind`` callback or round_trip."""
    kind: HostKind
    call: str


class CollectiveData(TypedDict):
    kind: CollectiveKind  # as XLA names it
    bytes: int
    # per run of its program: a loop's body runs it once per iteration; None in a loop of unknown trip count
    times: NotRequired[int | None]


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
    loops: NotRequired[list[int | None]]  # the witness's reading: its while loops' trip counts


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
    compilations: NotRequired[list[CompilationData]]
    host: NotRequired[list[HostData]]
    swapped: NotRequired[int]
    programs: NotRequired[list[ProgramData]]
    program: NotRequired[dict[str, Any]]
    between_bytes: NotRequired[int]  # full record: what programs of the call handed each other, per device
    # full record: the programs the call ran and the dataflow between them, for the witness
    # (grader.child.account; grader.witness.rerun.malformed checks its shape)
    account: NotRequired[dict[str, Any]]
    timing: NotRequired[CallTiming]


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


# -- what a reply may be -------------------------------------------------------------------------
# The replies each request may get, by its ``op``: the types above are the schema. A submission
# can write to its own channel, so every reply is checked against it where the parent decodes it
# (``grader.observe.session``), once, before any field is read: a reply that is not what its
# request asked for is the submission's doing.
REPLIES: dict[str, Any] = {"load": Union[LoadReply, RefusedReply], "call": Union[CallReply, RefusedReply],
                           "trace": Union[TraceReply, RefusedReply]}
Check = Callable[[Any, str], Union[str, None]]  # a value and where it is -> what is wrong with it, or None


def check_schema(op: str, reply: Any) -> None:
    """Raise :class:`Malformed` unless ``reply`` is one of the replies a request ``op`` may get:
    each field its type names present unless ``NotRequired``, of its type at any depth (objects,
    lists, literals, unions; ``bool`` is no ``int``), and no field the type does not name."""
    problem = _checker(REPLIES[op])(reply, "reply")
    if problem is not None:
        raise Malformed(problem)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


_SCALARS: dict[Any, Callable[[Any], bool]] = {
    str: lambda v: type(v) is str, bool: lambda v: type(v) is bool, int: lambda v: type(v) is int,
    float: lambda v: type(v) in (int, float), type(None): lambda v: v is None}
_NAMES = {str: "a string", bool: "a boolean", int: "an integer", float: "a number", type(None): "null"}


@functools.lru_cache(maxsize=None)
def _checker(hint: Any) -> Check:
    """The check of a value against a type of this module (compiled once per type)."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return lambda value, where: None
    if is_typeddict(hint):
        return _object_checker(hint)
    if hint in _SCALARS:
        test, name = _SCALARS[hint], _NAMES[hint]
        return lambda value, where: None if test(value) else f"{where} is {_kind(value)}, not {name}"
    if origin is Literal:
        return lambda value, where: None if any(type(value) is type(a) and value == a for a in args) \
            else f"{where} is not one of {', '.join(map(repr, args))}"
    if origin in (Union, types.UnionType):
        options = [_checker(a) for a in args]

        def one_of(value: Any, where: str) -> str | None:
            problems = [option(value, where) for option in options]
            return None if None in problems else problems[0]
        return one_of
    if origin in (list, dict):
        item = _checker(args[-1])

        def each(value: Any, where: str) -> str | None:
            if type(value) is not origin:
                return f"{where} is {_kind(value)}, not {'a list' if origin is list else 'an object'}"
            for key, inner in (value.items() if origin is dict else enumerate(value)):
                problem = item(inner, f"{where}[{str(key)[:40]!r}]" if origin is dict else f"{where}[{key}]")
                if problem is not None:
                    return problem
            return None
        return each
    raise TypeError(f"no check for {hint!r}")  # a type added above that the schema cannot read: the grader's bug


def _object_checker(cls: Any) -> Check:
    fields: dict[str, Check] = {}
    required: set[str] = set()
    for name, hint in get_type_hints(cls, include_extras=True).items():
        if get_origin(hint) is NotRequired:
            hint = get_args(hint)[0]
        else:
            required.add(name)
        fields[name] = _checker(hint)

    def check(value: Any, where: str) -> str | None:
        if type(value) is not dict:
            return f"{where} is {_kind(value)}, not an object"
        missing = required.difference(value)
        if missing:
            return f"{where} has no field {min(missing)!r}"
        for key, inner in value.items():
            field = fields.get(key)
            if field is None:
                return f"{where} has a field {str(key)[:40]!r} the protocol does not name"
            problem = field(inner, f"{where}[{key!r}]")
            if problem is not None:
                return problem
        return None
    return check
