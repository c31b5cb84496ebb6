"""What XLA made of a program: the collectives it runs and the memory it needs, per device
(runs in the child).

A jaxpr says what the student asked for; the compiled program says what runs. XLA's SPMD
partitioner inserts collectives the jaxpr never names (a sum over a sharded axis becomes an
all-reduce, a replicated ``out_shardings`` an all-gather), and only the compiled program knows
how much memory a step needs (``jax.checkpoint`` trades stored intermediates for recomputation:
the difference shows in the temporary bytes, not in any value). Both are read from the
executable JAX ran, after the call, so the grader's own compilation cache changes nothing:
an executable served from a cache is the same program.

The module is one SPMD program per device, so every figure is per device. A collective's
``bytes`` is the size of its result on one device (what an all-gather assembles, the slice a
reduce-scatter keeps, the whole operand of an all-reduce); one inside a loop body runs once
per iteration (``times``: the trip counts XLA knows, multiplied; None, unbounded, in a loop
whose trip count XLA does not know: a ``while_loop`` whose condition reads data).

Bytes are counted at the element type the program asked for. XLA's CPU backend (the simulated
devices) widens a bfloat16 all-reduce to float32 (its reduction is renamed ``..._promoted``)
and converts the result back; hardware that reduces bfloat16 moves half of that, and a
compression the student wrote must count as such, so such a collective counts at the type its
result is converted back to.
"""
from __future__ import annotations

import re
from typing import Any

from grader.child.ownership import Ownership
from grader.wire import CollectiveData, CompiledFacts, ProgramData

# XLA's collective operations, by the names its HLO text gives them (async pairs by their start).
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all")
_OPERATION = re.compile(r"=\s*(\(.*?\)|\S+)\s+(" + "|".join(COLLECTIVES) + r")(-start)?\(")
_SHAPE = re.compile(r"\b(pred|[suf]\d+|bf16|f8\w*|c64|c128)\[([\d,]*)\]")
_BITS = {"pred": 8, "bf16": 16, "c64": 64, "c128": 128}
_COMPUTATION = re.compile(r"^(?:ENTRY )?%?([\w.\-]+) \(")  # a computation's first line, unindented
_CALLED = re.compile(r"\b(body|condition|calls|to_apply)=%?([\w.\-]+)")
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")
_NAME = re.compile(r"%?([\w.\-]+)")
_WIDTH = re.compile(r"[suf](\d+)")
_WHILE = re.compile(r"\swhile\(")  # a while instruction: "%while.3 = (s32[], f32[8]) while(%tuple.2), ..."
TRIP_COUNT = re.compile(r'"known_trip_count":\{"n":"(\d+)"')
_PROMOTED = re.compile(r"\bto_apply=%?[\w.\-]+_promoted\b")  # a reduction XLA widened (bf16 run as f32)
_DEFINED = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(\(.*?\)|\S+)\s")  # "%name = SHAPE op(...)"
MAX_COLLECTIVES = 64  # of one program: more say nothing a check needs
MAX_LOOPS = 64  # loops of one program read for their trip counts
MAX_PROGRAMS = 64  # distinct XLA programs of one call's record


def _bits(element: str) -> int:
    """Bits of one HLO element type: ``f32`` 32, ``s4`` 4, ``f8e4m3fn`` 8, ``bf16`` 16."""
    if element in _BITS:
        return _BITS[element]
    return int(_WIDTH.match(element).group(1))


def _arrays(shape_text: str) -> list[tuple[int, int]]:
    """Each array of an HLO shape (``f32[8,4]{1,0}``, or a tuple of them): its element count and bits."""
    found = []
    for element, dims in _SHAPE.findall(shape_text):
        count = 1
        for dim in filter(None, dims.split(",")):
            count *= int(dim)
        found.append((count, _bits(element)))
    return found


def _sizes(shape_text: str) -> list[int]:
    """The bytes of each array in an HLO shape (``f32[8,4]{1,0}``, or a tuple of them)."""
    return [(count * bits + 7) // 8 for count, bits in _arrays(shape_text)]


def _asked(lines: list[str], index: int, shape_text: str) -> str:
    """The shape a widened collective (line ``index``) was asked for: what the first instruction
    reading its result converts it back to, when that holds as many elements in fewer bits;
    else its own."""
    defined = _DEFINED.match(lines[index])
    if defined is None:
        return shape_text
    reads = re.compile(rf"[(,\s]%{re.escape(defined.group(1))}[,)\s]")
    for line in lines[index + 1:]:
        if _COMPUTATION.match(line):
            break
        reader = _DEFINED.match(line)
        if reader is not None and reads.search(line[reader.end():]):
            mine, theirs = _arrays(shape_text), _arrays(reader.group(2))
            narrower = len(mine) == len(theirs) and all(
                n == m and b < c for (m, c), (n, b) in zip(mine, theirs))
            return reader.group(2) if narrower else shape_text
    return shape_text


def collectives(hlo_text: str) -> list[CollectiveData]:
    """The collective operations of an HLO module's text, each ``{"kind", "bytes", "times"}``
    (``bytes`` at the element type asked for, see the module's docstring): ``times`` is how often one run of the program runs it (a collective in a loop's body runs
    once per iteration: XLA's known trip count of each enclosing while loop, multiplied; None
    inside a loop whose trip count XLA does not know)."""
    found: list[CollectiveData] = []
    times = times_run(hlo_text)
    computation = ""
    lines = hlo_text.splitlines()
    for index, line in enumerate(lines):
        header = _COMPUTATION.match(line)
        if header is not None:
            computation = header.group(1)
            continue
        match = _OPERATION.search(line)
        if match is not None:
            shape = _asked(lines, index, match.group(1)) if _PROMOTED.search(line) else match.group(1)
            sizes = _sizes(shape)
            # an async all-gather or permute starts with (operand, result, ...): its result is the largest
            moved = max(sizes, default=0) if match.group(3) and match.group(2) != "all-reduce" else sum(sizes)
            found.append({"kind": match.group(2), "bytes": moved, "times": times.get(computation, 1)})
            if len(found) == MAX_COLLECTIVES:
                break
    return found


def loops_run_once(hlo_text: str) -> list[int | None]:
    """The trip count of each while loop one run of an HLO module runs once (a scan, a fori_loop,
    a while_loop; XLA's known trip count, None where it does not know one). A loop in another
    loop's body runs once per step of that one, so it is left out: its steps are the outer loop's
    work, and one nested in a loop of unknown length is as unknown as that one. But one of
    unknown length in the body of a loop of known length is listed, as None: a scan of 4 steps
    whose body runs a ``while_loop`` until the data says stop runs a number of steps no count
    of the outer loop bounds."""
    times = times_run(hlo_text)
    found: list[int | None] = []
    computation = ""
    for line in hlo_text.splitlines():
        header = _COMPUTATION.match(line)
        if header is not None:
            computation = header.group(1)
            continue
        runs = times.get(computation)
        if runs is None or not _WHILE.search(line):
            continue
        trip = TRIP_COUNT.search(line)
        if runs == 1:
            found.append(int(trip.group(1)) if trip else None)
        elif trip is None:
            found.append(None)
    return found[:MAX_LOOPS]


def times_run(hlo_text: str) -> dict[str, int | None]:
    """How many times one run of the module runs each computation: the entry once, a while
    loop's body its known trip count times (None, unbounded, when XLA does not know it) for each
    time the loop runs, any other called computation (a fusion, a call, a branch) as often as its
    caller. A loop's condition runs once more than its body (None too where the body's count is)."""
    calls: dict[str, list[tuple[str, int | None]]] = {}  # computation -> (called, times per run of it)
    entry, computation = "", ""
    for line in hlo_text.splitlines():
        header = _COMPUTATION.match(line)
        if header is not None:
            computation = header.group(1)
            entry = computation if line.startswith("ENTRY") else entry
            continue
        trips = TRIP_COUNT.search(line)
        for role, called in _CALLED.findall(line):
            known = int(trips.group(1)) if trips else None
            trip = {"body": known, "condition": None if known is None else known + 1}.get(role, 1)
            calls.setdefault(computation, []).append((called, trip))
        for group in _BRANCHES.findall(line):
            calls.setdefault(computation, []).extend((name, 1) for name in _NAME.findall(group))
    times: dict[str, int | None] = {}
    todo: list[tuple[str, int | None]] = [(entry, 1)]
    while todo and len(times) < 10_000:  # a module's call graph has no cycles; the bound is a guard
        name, count = todo.pop()
        known = times.get(name, 0)
        times[name] = None if count is None or known is None else max(known, count)
        todo.extend((called, None if count is None or trips is None else count * trips)
                    for called, trips in calls.get(name, ()))
    return times


def facts(executable: Any) -> CompiledFacts | None:
    """The collectives and the per-device memory of a JAX executable (``pxla.MeshExecutable``),
    or None when it holds no XLA program to read."""
    try:
        loaded = executable.xla_extension_executable()
        modules = loaded.hlo_modules()
        stats = loaded.get_compiled_memory_stats()
    except Exception:  # an executable of another kind (a host-only program): nothing to say
        return None
    memory = {"argument": int(stats.argument_size_in_bytes), "output": int(stats.output_size_in_bytes),
              "temp": int(stats.temp_size_in_bytes), "alias": int(stats.alias_size_in_bytes)}
    return {"collectives": [c for module in modules[:4] for c in collectives(module.to_string())][:MAX_COLLECTIVES],
            "memory": memory}


def programs(events: list[tuple[Any, ...]], ownership: Ownership,
             known: dict[int, tuple[Any, CompiledFacts | None]]) -> list[ProgramData]:
    """Every XLA program a fully recorded call ran (its ``executed`` events), once each, in the
    order first run: its name, the function (``step at solution.py:12`` for a jitted function
    the call made), whether it is the submission's own, how many times it ran, and its
    ``facts``. JAX's own programs count too: an eager ``shard_map`` runs each collective as one,
    an eager sum over a sharded array its all-reduce. ``known`` keeps each executable read
    (id -> (it, facts)) alive across calls, so an id is never another's."""
    made: dict[int, tuple[str, bool]] = {}  # id(executable) -> the jitted function the call made
    for event in events:
        if event[0] == "jit" and len(event) > 6 and event[6] is not None and len(event[5]) == 4:
            call = event[5][0]
            made[id(event[6])] = ownership.source(event[1], *((call[1], call[2]) if call is not None else ()))
    found: dict[int, ProgramData] = {}
    for event in events:
        if event[0] != "executed" or len(event) < 3:
            continue
        executable = event[2]
        if id(executable) in found:
            found[id(executable)]["runs"] += 1
            continue
        if id(executable) not in known:
            known[id(executable)] = (executable, facts(executable))
        read = known[id(executable)][1]
        if read is not None and len(found) < MAX_PROGRAMS:
            function, own = made.get(id(executable), (str(event[1]), False))
            found[id(executable)] = {"name": str(event[1]), "function": function, "own": own, "runs": 1, **read}
    return list(found.values())


def held_between(events: list[tuple[Any, ...]], given: list[tuple[str, Any]], returned: list[tuple[str, Any]]) -> int:
    """Bytes per device (on the device that holds most) of the arrays one program of the call
    made and a later one read: a computation split into programs keeps its intermediates
    between them, in arrays no program's own temporaries show (a forward scan returning every
    layer's activations to a second program that does the backward pass). The function's
    arguments and what it returns are not counted. Sized by each array's sharding, so one a
    later program donated counts too."""
    skip = {id(value) for _, value in (*given, *returned)}
    made: dict[int, Any] = {}
    kept: dict[int, Any] = {}
    for event in events:
        if event[0] != "jit" or len(event) < 4:
            continue
        for operand in event[2]:
            if id(operand) in made and id(operand) not in skip:
                kept[id(operand)] = made[id(operand)]
        for out in event[3]:
            made[id(out)] = out
    total = 0
    for array in kept.values():
        try:
            shape = array.sharding.shard_shape(tuple(array.shape))
            count = 1
            for n in shape:
                count *= int(n)
            total += count * array.dtype.itemsize
        except Exception:  # not an array of JAX's (a tracer's leftovers): nothing held between programs
            continue
    return total
