"""What one call gave back, parsed from the child's reply into plain values.

Everything here came from a process the submission ran in: every string is made safe and
bounded (:func:`safe_text`) and every reply checked against its schema (``grader.wire``'s typed
replies, ``grader.wire.check_schema``) once, where it enters the grader, so no check, renderer
or file ever sees a lone surrogate, an 8 MiB message or a reply of the wrong shape. Each helper
below takes a part of a reply that passed that check, and checks only what a type cannot say
(an array that agrees with its own shape and dtype, counts that are not negative). A malformed
reply raises :class:`Malformed`, which the session turns into a "protocol" incident: the
submission's failure, not the grader's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, get_args

import numpy as np

from grader.errors import Malformed
from grader.observe.program import Program
from grader.wire import (WIDENED, CollectiveKind, CompilationData, HostData, JitCallData, LeafData, ProgramData,
                         ValueData, decode_array, holds_reals)

MAX_TEXT = 2000  # characters of any one message from the child (an exception, a repr)
# What JAX raises when its compiler or runtime fails (not a Python error in the student's code).
JAX_FAILURES = ("JaxRuntimeError", "XlaRuntimeError")


def safe_text(value: Any, limit: int = MAX_TEXT) -> str:
    """``value`` as text every output can hold: valid UTF-8 (lone surrogates replaced) and at
    most ``limit`` characters, with what was cut said."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) > limit:
        text = f"{text[:limit]}… [{len(text) - limit} more characters]"
    if text.isascii():  # most of a reply (its keys and type names): valid as it is
        return text
    return text.encode("utf-8", "replace").decode("utf-8")


def safe_reply(value: Any, key: str | None = None, depth: int = 0) -> Any:
    """A reply from the child with every string made safe and bounded (base64 payloads aside:
    decoding checks those). Deeper than any reply the protocol has, nesting is malformed."""
    if depth > 64:
        raise Malformed("a reply nested deeper than the protocol allows")
    kind = type(value)  # JSON gives exactly these types; numbers (most of a reply) pass at once
    if kind is str:
        return value if key == "b64" else safe_text(value)
    if kind is dict:
        return {safe_text(k, 200): safe_reply(v, k, depth + 1) for k, v in value.items()}
    if kind is list:
        return [safe_reply(v, key, depth + 1) for v in value]
    return value


@dataclass(frozen=True)
class Incident:
    kind: str  # "time" | "memory" | "disk" | "crash" | "protocol" | "gave_up"
    message: str
    # Met after the grading had drawn inputs from its seed (grader.checks.base.Context.draw): it
    # may depend on the seed. One met before is part of every seed's grading (Session.begin_grading).
    seeded: bool = False
    # Met while a check not shown to students yet ran (Session.withheld): its message may tell
    # something of that check's inputs, so a shown check says only that it happened.
    withheld: bool = False


@dataclass(frozen=True)
class Leaf:
    """One returned leaf: ``path`` as JAX's keystr writes it (``result``, ``result['w']``)."""
    path: str
    kind: str  # jax_array | numpy | python | other
    type: str
    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    array: np.ndarray | None = None
    sharding: dict[str, Any] | None = None
    shards: tuple[dict[str, Any], ...] = ()
    repr: str | None = None
    typed_sharding: dict[str, Any] | None = None  # as jax.typeof(x).sharding states it (explicit sharding)

    def describe(self) -> str:
        """What the leaf is, as a phrase: "a JAX array of shape (3,) and dtype float32"."""
        if self.kind == "other":
            return f"an object of type {self.type[:200]} ({self.repr or ''})"
        if self.kind == "python":
            return f"a Python {self.type.split('.')[-1]}"
        what = "a JAX array" if self.kind == "jax_array" else f"a NumPy value ({self.type})"
        return f"{what} of shape {self.shape} and dtype {self.dtype}"

    def number(self) -> float | None:
        """The leaf as one real number, when it holds exactly one."""
        if self.array is None or self.array.size != 1 or not holds_reals(self.array.dtype):
            return None
        return float(self.array.reshape(()))


def parse_leaves(value: ValueData) -> tuple[Leaf, ...]:
    try:
        return tuple(_leaf(found) for found in value["leaves"])
    except (TypeError, ValueError) as error:  # an array's bytes or dtype that do not decode
        raise Malformed(f"a returned value was not described as the protocol says ({error})") from None


def _leaf(data: LeafData) -> Leaf:
    array = decode_array(data["array"]) if "array" in data else None
    shape = tuple(data["shape"]) if "shape" in data else None
    sent = WIDENED.get(data.get("dtype"), data.get("dtype"))  # ml_dtypes' narrow types widened by the child
    if array is not None and (array.shape != shape or str(array.dtype) != sent):
        raise ValueError("an array disagrees with its own shape or dtype")
    return Leaf(path=safe_text(data["path"], 300), kind=data["kind"], type=safe_text(data["type"], 300),
                dtype=safe_text(data["dtype"], 40) if "dtype" in data else None, shape=shape, array=array,
                sharding=data.get("sharding"), shards=tuple(data.get("shards", ())),
                repr=safe_text(data["repr"], 200) if "repr" in data else None, typed_sharding=data.get("typed_sharding"))


@dataclass(frozen=True)
class Recompiled:
    """Why a jitted function was traced or compiled again: what differs from its last trace.
    ``what``: "type" (a traced argument's shape, dtype or weak type), "static" (a static
    argument's value), "sharding" (a traced argument's), "arguments" (other arguments),
    "new_function" (a new function object: jitted anew) or "other" (a captured value, a
    global); ``argument``: which, ``before``/``after``: its two types or values, in words."""
    what: str
    argument: str
    before: str
    after: str


@dataclass(frozen=True)
class JitCall:
    """One call of a jitted function: its name, and ``status``: "traced" (a program not seen
    before), "compiled" (a known program compiled for new shardings or shapes) or "cached".
    ``function``: where it was defined (``step at solution.py:12``); ``own``: the submission's
    own function (not JAX's); ``compiles``: programs compiled during the call; ``again``:
    why it was traced or compiled again; ``donated``: the arguments it donates, ``reused``:
    those whose buffers XLA reused (deleted by the call); ``donated_leaves``/``reused_leaves``:
    the same, of the graded function's own argument leaves passed to it as given (by path);
    ``computes``: the leaves of what the graded function returned that this call's program
    computed (an output, not an operand passed through); ``placed_reused``: leaves whose placed
    copy was donated and its buffer reused (placed by ``jax.device_put`` first, or by JAX onto
    the jit's ``in_shardings``, the leaf itself kept)."""
    name: str
    status: str
    function: str = ""
    own: bool = False
    compiles: int = 0
    again: Recompiled | None = None
    donated: tuple[str, ...] = ()
    reused: tuple[str, ...] = ()
    donated_leaves: tuple[str, ...] = ()
    reused_leaves: tuple[str, ...] = ()
    computes: tuple[str, ...] = ()
    placed_reused: tuple[str, ...] = ()


@dataclass(frozen=True)
class Compilation:
    """Programs XLA compiled during one call for one function, by any route: a jitted call,
    or an executable lowered and compiled ahead of time. ``own``: the submission's function."""
    function: str
    own: bool
    count: int


@dataclass(frozen=True)
class HostWork:
    """Work a call did on the host amid its JAX work. ``kind``: "callback" (jax.pure_callback,
    io_callback, a debug callback, whose result the call goes on to use) or "round_trip" (a
    value pulled to NumPy and given back to JAX); ``call`` says which, in words."""
    kind: str
    call: str


@dataclass(frozen=True)
class Collective:
    """A collective operation XLA runs: ``kind`` as XLA names it ("all-reduce", "all-gather",
    "reduce-scatter", "collective-permute", "all-to-all"), ``bytes``, its result's size on
    one device, and ``times``, how often one run of its program runs it (in a loop's body: once
    per iteration; None, unbounded, in a loop whose trip count depends on data)."""
    kind: str
    bytes: int
    times: int | None = 1


@dataclass(frozen=True)
class DeviceMemory:
    """What one XLA program needs on each device, in bytes: its arguments' shards, its outputs'
    shards, its temporary buffers (what a step keeps for its backward pass lives here), and the
    outputs that reuse an argument's buffer (donation)."""
    argument: int
    output: int
    temp: int
    alias: int

    @property
    def peak(self) -> int:
        """At most this much at once: arguments, outputs and temporaries, donated buffers once."""
        return self.argument + self.output + self.temp - self.alias


@dataclass(frozen=True)
class CompiledProgram:
    """One XLA program a fully recorded call ran (``runs`` times): its ``name``, the
    ``function`` it compiles (``step at solution.py:12``), whether it is the submission's
    ``own`` jitted function (not a program JAX ran for an eager operation), its collectives
    and its memory per device."""
    name: str
    function: str
    own: bool
    runs: int
    collectives: tuple[Collective, ...]
    memory: DeviceMemory
    # its while loops' trip counts (None: unknown), as the witness's compilation reads them on the
    # call's values; () where the child's own reading stands (it reads no loops)
    loops: tuple[int | None, ...] = ()

    @property
    def unbounded(self) -> bool:
        """Some collective of it runs in a loop whose trip count depends on data."""
        return any(c.times is None for c in self.collectives)

    @property
    def communicated(self) -> int:
        """Bytes of collective results per device over all its runs, a collective in a loop of
        unknown trip count counted once (``unbounded`` says so)."""
        return self.runs * sum(c.bytes * (1 if c.times is None else c.times) for c in self.collectives)


@dataclass(frozen=True)
class Held:
    """An array a fully recorded call held between its programs (or made and left alive after
    it), as the witness placed it again (``grader.witness.rerun``): whatever made it
    (``jax.device_put``, ``jnp.array(..., device=)``, ``jax.make_array_from_callback``, a jitted
    program's outputs), its ``shape``,
    ``itemsize``, the ``most`` bytes of it one device holds, on how many ``devices``, whether
    it is on the one device the arguments arrived on (``beside_arguments``), made or first read
    by the account's step ``step``."""
    shape: tuple[int, ...]
    itemsize: int
    most: int
    devices: int
    beside_arguments: bool
    step: int

    @property
    def size(self) -> int:
        return math.prod(self.shape)


def parse_held(data: list[dict[str, Any]]) -> tuple[Held, ...]:
    """The witness's ``held`` list; ValueError, KeyError or TypeError where it is not one."""
    def count(value: Any) -> int:
        if type(value) is not int or value < 0:
            raise ValueError(f"{value!r} is not a count")
        return value
    return tuple(Held(tuple(count(n) for n in d["shape"]), count(d["itemsize"]), count(d["most"]),
                      count(d["devices"]), d["beside_arguments"] is True, count(d["step"])) for d in data[:1024])


def parse_jit_calls(data: list[JitCallData]) -> tuple[JitCall, ...]:
    return tuple(_jit_call(d) for d in data[:256])


def _jit_call(data: JitCallData) -> JitCall:
    again = data.get("again")
    names = [data.get(k, []) for k in ("donated", "reused", "donated_leaves", "reused_leaves", "computes",
                                        "placed_reused")]
    return JitCall(safe_text(data["name"], 200), data["status"], safe_text(data["function"], 300),
                   data["own"], max(0, data["compiles"]),
                   None if again is None else Recompiled(again["what"], *(safe_text(again[k], 200)
                                                                          for k in ("argument", "before", "after"))),
                   *(tuple(safe_text(v, 200) for v in n[:16]) for n in names))


COLLECTIVE_KINDS: tuple[str, ...] = get_args(CollectiveKind)
_MEMORY = ("argument", "output", "temp", "alias")


def parse_programs(data: list[ProgramData]) -> tuple[CompiledProgram, ...]:
    try:
        return tuple(_program(d) for d in data[:64])
    except ValueError as error:
        raise Malformed(f"compiled programs are not as the protocol says ({error})") from None


def _program(data: ProgramData) -> CompiledProgram:
    def count(value: int) -> int:
        if value < 0:
            raise ValueError(f"{value!r} is not a count")
        return value
    collectives = tuple(Collective(c["kind"], count(c["bytes"]),
                                   None if c.get("times", 1) is None else max(1, count(c.get("times", 1))))
                        for c in data["collectives"][:64])
    loops = tuple(None if trips is None else count(trips) for trips in data.get("loops", [])[:64])
    return CompiledProgram(safe_text(data["name"], 200), safe_text(data["function"], 300), data["own"],
                           count(data["runs"]), collectives, DeviceMemory(*(count(data["memory"][k]) for k in _MEMORY)),
                           loops)


def parse_compilations(data: list[CompilationData]) -> tuple[Compilation, ...]:
    return tuple(Compilation(safe_text(d["function"], 300), d["own"], max(0, d["count"])) for d in data[:64])


def parse_host(data: list[HostData]) -> tuple[HostWork, ...]:
    return tuple(HostWork(d["kind"], safe_text(d["call"], 300)) for d in data[:8])


@dataclass(frozen=True)
class Returned:
    """What one call gave back, as the child described it."""
    ok: bool
    leaves: tuple[Leaf, ...] = ()
    error: str | None = None
    exception: str | None = None
    placements: tuple[dict[str, Any], ...] = ()
    incident: Incident | None = None
    program: Program | None = None  # the real call's program, when it was recorded in full
    intact: bool = True  # the grader's observers were still in place when the call ended
    extras: dict[str, Any] = field(default_factory=dict)
    jit_calls: tuple[JitCall, ...] = ()  # every jitted function the call ran, in order
    compilations: tuple[Compilation, ...] = ()  # the programs XLA compiled during the call, by function
    host: tuple[HostWork, ...] = ()  # host callbacks, custom rules, values pulled to NumPy and given back
    swapped: int | None = None  # in a counterfactual call: how many placed values it captured, or fed
    programs: tuple[CompiledProgram, ...] = ()  # in a full record: every XLA program it ran, once each
    # in a full record: bytes per device of the arrays one program made and a later one read
    between_bytes: int = 0
    account: Any = None  # in a full record: the account the child handed over (grader.child.account)
    reproduced: bool = False  # in a full record: the witness ran the account and it gave what was returned
    held: tuple[Held, ...] = ()  # in a full record whose account was reproduced: the arrays held between programs
    # in a full record the witness could not run: why (its programs, loops and held arrays are then unconfirmed)
    unverified: str | None = None
    seconds: float = 0.0  # the call's round trip, as the grader timed it (what its witness's budget is made from)

    @property
    def jax_failed(self) -> bool:
        """The call failed inside JAX's compiler or runtime (e.g. lowering a zero-size operand)."""
        return not self.ok and self.incident is None and self.exception in JAX_FAILURES

    def leaf(self, path: str = "result") -> Leaf | None:
        return next((leaf for leaf in self.leaves if leaf.path == path), None)

    def single(self) -> Leaf | None:
        """The returned value when it is one leaf (not a tuple or dict of them)."""
        return self.leaves[0] if len(self.leaves) == 1 and self.leaves[0].path == "result" else None

    def number(self) -> float | None:
        single = self.single()
        return single.number() if single else None

    def describe(self) -> str:
        """What the function did, as a phrase that follows "your function"."""
        if self.incident and self.incident.kind == "gave_up":
            return f"was not run ({self.incident.message})"
        if self.incident:
            return f"did not return: {self.incident.message}"
        if self.jax_failed:
            return (f"made JAX itself fail (a limitation of JAX on this input, not a wrong answer; the task allows "
                    f"this input, so write the function in a way JAX can run on it): {self.error}")
        if not self.ok:
            return f"raised {self.error}"
        return f"returned {describe_structure(self.leaves)}"


def describe_structure(leaves: tuple[Leaf, ...]) -> str:
    """A returned value in words: one leaf, or a structure and its leaves."""
    if len(leaves) == 1 and leaves[0].path == "result":
        return leaves[0].describe()
    if not leaves:
        return "an empty structure (None, or containers holding nothing)"
    shown = "; ".join(f"{leaf.path}: {leaf.describe()}" for leaf in leaves[:6])
    more = f"; and {len(leaves) - 6} more" if len(leaves) > 6 else ""
    return f"a structure of {len(leaves)} values ({shown}{more})"
