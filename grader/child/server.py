"""The request server of the sandboxed child: runs inside a child process, never in the grader's.

Started by ``grader.child.entry`` once JAX is imported for the exercise's device count and its
observers are in place (``grader.child.recorder`` and its routes), *before* the submission is imported, it
answers the parent's requests over a private channel (``grader.wire``): ``load`` (import the
file, find the function; a converted notebook runs cell by cell, ``grader.child.run_cells``), ``call``
(run it on one set of arguments and describe what came back, which placements happened and,
when asked, the whole program the call ran with the real buffers of what it placed and
returned), ``trace`` (the program ``jax.make_jaxpr`` records for it), ``exit``. It describes
raw facts only; every judgement is made by the parent. Like all of ``grader.child`` it imports
nothing from the grader but the wire and the errors, so it starts fast.
"""
from __future__ import annotations

import inspect
import os
import sys
import time
import types
import warnings
from typing import Any, Callable

from grader.child.pins import originals
from grader.child.startup_output import restore as restore_output
from grader.child.error_text import error_text
from grader.child.run_cells import run_cells
from grader.child.sharding_data import describe_sharding
from grader.child.typed import typed_sharding
from grader.errors import CellFailed, ChannelClosed
from grader.wire import (HEADER, WIDENED, CallReply, LoadReply, Ready, Reply, Skipped, TraceReply, ValueData,
                         carries, decode_array, encode_array, fits, frame, read_message, write_frame, write_message)

MAX_RETURNED_ELEMENTS = 1 << 20
MAX_RETURNED_LEAVES = 256
# A notebook's cells skipped because they failed: this many described (grader.child.run_cells).
MAX_SKIPPED = 20


class Child:
    def __init__(self, inbox: int, outbox: int) -> None:
        self.inbox, self.outbox = inbox, outbox
        from jax._src.array import ArrayImpl
        from jax import Device
        from jax.sharding import NamedSharding

        from grader.child.account import account_of_call
        from grader.child.cells import read_cells
        from grader.child.compiled import held_between
        from grader.child.dataflow import concrete, is_staged, placements_of, program_of_call
        from grader.child.jaxpr_graph import program_of
        from grader.child.replay import Replayer

        self.read_cells = read_cells
        self.jax, self.np, self.recorder, self.pins = originals()
        # imported now: a later import could find the submission's "grader"
        self.program_of, self.program_of_call, self.placements_of = \
            program_of, program_of_call, placements_of
        self.replayer = Replayer(self.jax, self.np)
        self.held_between = held_between
        self.account_of_call, self.concrete, self.is_staged = account_of_call, concrete, is_staged
        # The shared compilation cache is read-only here (grader.child.confine): a miss is not news.
        warnings.filterwarnings("ignore", message="Error writing persistent compilation cache entry")
        warnings.filterwarnings("ignore", message="Error reading persistent compilation cache entry")
        self.protections: dict[str, dict[str, Any]] = {}
        self.ArrayImpl, self.Device, self.NamedSharding = ArrayImpl, Device, NamedSharding
        self.function: Callable[..., Any] | None = None
        self.captured: list[Any] = []  # what the placing operations of the last capturing call received
        self.filename = "<submission>"
        # Timings (grader.timings): the clock, taken before any submission can replace it, and the
        # instants of the start that grader.child.entry noted.
        self.clock = time.monotonic
        self.started: dict[str, float] = {}
        # Everything here is fixed before the submission exists. Methods become instance
        # attributes (they win over the class's, so patching grader.child.server.Child changes
        # nothing).
        for name, member in vars(Child).items():
            if inspect.isfunction(member) and not name.startswith("__"):
                setattr(self, name, member.__get__(self))
        for name in ("load", "call", "trace"):
            setattr(self, name, self._guarded(getattr(self, name)))

    def _guarded(self, handler: Callable[..., Reply]) -> Callable[..., Reply]:
        """The request handler, run with the original JAX, and again after it: what the
        submission patched (at import, or in a factory) is put back, so the recorder observes
        with JAX's own code. Nothing a patch makes it report is taken on trust: the witness
        re-derives what the verdicts rest on (``grader.observe.confirmed``)."""
        restore = self.pins.restore

        def guarded(*args: Any) -> Reply:
            restore()
            reply = handler(*args)
            restore()
            return reply

        return guarded

    # -- describing values ---------------------------------------------------------------
    def describe_sharding(self, target: Any) -> dict[str, Any]:
        return describe_sharding(target, self.Device, self.NamedSharding)

    def describe_shards(self, value: Any) -> list[dict[str, Any]]:
        """Where each piece of a returned array lives: device id and [start, stop) per dimension."""
        shards = []
        for shard in value.addressable_shards[:64]:
            index = [[*s.indices(n)[:2]] for s, n in zip(shard.index, value.shape)]
            shards.append({"device": int(shard.device.id), "index": index})
        return shards

    def describe_leaf(self, value: Any) -> dict[str, Any]:
        """A ``grader.wire.LeafData`` but its ``path`` (``describe_value`` puts it first)."""
        np = self.np
        kind = type(value)
        described: dict[str, Any] = {"type": f"{kind.__module__}.{kind.__qualname__}"}
        if kind is self.ArrayImpl:
            described["kind"] = "jax_array"
            try:  # a sharding whose mesh was rewritten after the array was made may not even describe
                described["sharding"] = self.describe_sharding(value.sharding)
                described["shards"] = self.describe_shards(value)
            except Exception as error:
                described["sharding"] = {"type": "unreadable", "error": f"{type(error).__name__}: {error}"}
                described["shards"] = []
            typed = typed_sharding(self.jax, value, self.describe_sharding)
            if typed is not None:
                described["typed_sharding"] = typed
            # Nothing to read from an empty array (and JAX 0.10.2 fails reading some sharded ones).
            try:
                array = np.zeros(value.shape, value.dtype) if value.size == 0 else np.asarray(value)
            except Exception:
                described["dtype"], described["shape"] = str(value.dtype), list(value.shape)
                return described
        elif kind is np.ndarray or isinstance(value, np.generic):
            described["kind"] = "numpy"
            array = np.asarray(value)
        elif kind in (float, int, bool):
            described["kind"] = "python"
            array = np.asarray(value)
        else:
            described["kind"] = "other"
            try:
                described["repr"] = repr(value)[:200]
            except BaseException as error:  # a hostile __repr__ must not take the child down
                described["repr"] = f"<unprintable: {type(error).__name__}>"
            return described
        described["dtype"], described["shape"] = str(array.dtype), list(array.shape)
        if carries(array.dtype) and array.size <= MAX_RETURNED_ELEMENTS:
            # bfloat16, the float8s, int4 ... travel as the float32 (int8, ...) numbers they are
            # (exactly): the grader's process compares numbers and never imports ml_dtypes (~0.5 s)
            described["array"] = encode_array(array.astype(WIDENED[array.dtype.name]) if array.dtype.name in WIDENED
                                              else array)
        return described

    def leaves(self, value: Any, prefix: str) -> list[tuple[str, Any]]:
        """(path, leaf) of a value, paths as ``jax.tree_util.keystr`` writes them after ``prefix``;
        a structure too big to be an answer is one opaque leaf."""
        tree_util = self.jax.tree_util
        try:
            found, _ = tree_util.tree_flatten_with_path(value)
        except Exception:
            return [(prefix, value)]
        if len(found) > MAX_RETURNED_LEAVES:
            return [(prefix, _TooBig(len(found)))]
        return [(prefix + tree_util.keystr(path), leaf) for path, leaf in found]

    def describe_value(self, returned: list[tuple[str, Any]]) -> ValueData:
        return {"leaves": [{"path": path, **self.describe_leaf(leaf)} for path, leaf in returned]}

    # -- arguments -------------------------------------------------------------------------------
    def build(self, encoded: dict[str, Any]) -> Any:
        """A JAX value from the parent's description (grader.arguments.encode): arrays on the
        default device, uncommitted, as ``jnp.asarray`` makes them (``device_put`` because
        ``jnp.asarray`` stages a copy that compiles once per new shape)."""
        kind = encoded["kind"]
        if kind == "array":
            return self.jax.device_put(decode_array(encoded))
        if kind in ("int", "float", "bool"):
            return {"int": int, "float": float, "bool": bool}[kind](encoded["value"])
        if kind == "key":
            return self.jax.random.key(int(encoded["seed"]))
        if kind == "dict":
            return {str(k): self.build(v) for k, v in encoded["items"]}
        if kind in ("tuple", "list"):
            items = [self.build(v) for v in encoded["items"]]
            return tuple(items) if kind == "tuple" else items
        if kind == "none":
            return None
        raise ValueError(f"unknown argument kind {kind!r}")

    def arguments(self, named: list[list[Any]]) -> tuple[list[Any], list[tuple[str, Any]]]:
        """The positional arguments, and every leaf of them by path (``x``, ``params['w']``)."""
        values = [self.build(encoded) for _, encoded in named]
        leaves = [leaf for (name, _), value in zip(named, values) for leaf in self.leaves(value, name)]
        return values, leaves

    # -- requests ----------------------------------------------------------------------------
    def load(self, path: str, display_name: str, function: str, arity: int = 1,
             factory: bool = False, demo_s: float | None = None) -> LoadReply:
        self.filename = display_name
        try:
            with open(path, "rb") as handle:
                source = handle.read()
            code = compile(source, display_name, "exec", dont_inherit=True)
        except SyntaxError as error:
            return {"ok": False, "stage": "syntax", "error": f"{type(error).__name__}: {error.msg}",
                    "line": error.lineno, "text": (error.text or "").rstrip()}
        except (OSError, ValueError) as error:
            return {"ok": False, "stage": "read", "error": f"{type(error).__name__}: {error}"}
        stem = os.path.splitext(os.path.basename(display_name))[0]
        name = stem if stem.isidentifier() else "submission"
        # The submission's own helper modules sit beside it, found after every folder of the
        # grader's and JAX's: no file there stands in for a module they import (lazily too).
        sys.path.append(os.path.dirname(path))
        module = types.ModuleType(name)
        module.__file__ = path
        sys.modules[name] = module
        cells = self.read_cells(source)
        skipped: list[Skipped] = []  # the notebook cells skipped because they failed
        restore_output()  # from its first line on, what the process prints is the submission's
        began = self.clock()
        try:
            if cells is None:  # a .py file: run whole, as Python imports it
                exec(code, module.__dict__)
            else:
                run_cells(self.filename, source, cells, module.__dict__, skipped, function, demo_s)
        except CellFailed as failed:
            return {"ok": False, "stage": "import", "error": error_text(failed.error, display_name),
                    "exception": type(failed.error).__name__, "cell": failed.cell, "needed": failed.needed,
                    **_skipped(skipped)}
        except BaseException as error:
            return {"ok": False, "stage": "import", "error": error_text(error, display_name),
                    "exception": type(error).__name__}
        ran_file = self.clock() - began
        candidate = module.__dict__.get(function)
        if candidate is None:
            defined = sorted(k for k, v in module.__dict__.items()
                             if callable(v) and getattr(v, "__module__", None) == name)
            return {"ok": False, "stage": "function", "defined": defined, **_skipped(skipped)}
        if not callable(candidate):
            return {"ok": False, "stage": "not_callable", "type": type(candidate).__name__, **_skipped(skipped)}
        made_by = None
        if factory:  # the graded function is what function() returns, made once
            made_by = function
            try:
                candidate = candidate()
            except BaseException as error:
                return {"ok": False, "stage": "factory", "error": error_text(error, display_name),
                        "exception": type(error).__name__, **_skipped(skipped)}
            if not callable(candidate):
                return {"ok": False, "stage": "not_callable", "type": type(candidate).__name__, "made_by": made_by,
                        **_skipped(skipped)}
            function = getattr(candidate, "__name__", "the returned function")
        try:
            signature = inspect.signature(candidate)
        except (TypeError, ValueError):
            signature = None
        try:
            accepts = signature is None or signature.bind(*[object()] * arity) is not None
        except TypeError:
            accepts = False
        self.function = candidate
        # Code from the submission's own folder (its file and helpers): a custom rule there is the student's.
        self.recorder.student_files = (display_name, os.path.dirname(path))
        self.recorder.clear_caches()  # a shape the import already ran is a first call again for the grader
        return {"ok": True, "signature": f"{function}{signature}" if signature else function, "accepts": accepts,
                **({"made_by": made_by} if made_by else {}), **_skipped(skipped),
                "timing": {"file_s": ran_file}}

    def call(self, named: list[list[Any]], mode: str = "placements",
             counterfactual: dict[str, Any] | None = None, fresh: bool = False) -> CallReply:
        """Run the function once. ``counterfactual`` ({"capture": bool, "sharding", "shape",
        "turn"}): capture what the placing operations receive (of eager device_puts of ``shape``
        onto ``sharding``, only the ``turn``-th; each when given), kept for the next call; or
        feed the last captured values to them instead. ``fresh``: the first call of another
        grading (under another seed), whose shapes are first calls again, as after the import."""
        values, leaves = self.arguments(named)
        recorder, function = self.recorder, self.function
        if fresh:
            recorder.clear_caches()
        if counterfactual is not None:
            wanted, capturing = counterfactual.get("sharding"), counterfactual.get("capture") is True
            shape = counterfactual.get("shape")
            onto = (lambda target: wanted is None or self.describe_sharding(target) == wanted)
            turn = counterfactual.get("turn")
            recorder.swap[0] = recorder.Swap(capturing, onto, None if shape is None else tuple(int(n) for n in shape),
                                             None if turn is None else int(turn), None if capturing else self.captured)
            if capturing:
                self.captured = recorder.swap[0].values
        raised: BaseException | None = None
        clock, compile_s = self.clock, recorder.compile_s
        compiling = compile_s[0]
        # the arrays alive before a full call: what it leaves alive beyond them it made (and kept)
        alive = {id(a) for a in self.jax.live_arrays()} if mode == "full" and not recorder.holds_donated() else None
        recorder.start(mode)
        began = clock()
        try:
            result = function(*values)
        except BaseException as error:
            raised = error
        ran = clock() - began
        events = recorder.stop()
        timing = {"run_s": ran, "compile_s": compile_s[0] - compiling}
        intact = recorder.intact()  # before restoring: were the observers there when the call ended?
        swapped = recorder.swap[0].count if recorder.swap[0] is not None else None
        recorder.swap[0] = None
        self.pins.restore()
        if raised is not None:
            return {"ok": False, "exception": type(raised).__name__, "error": error_text(raised, self.filename),
                    "placements": self.placements_of(events, leaves, self.describe_sharding), "timing": timing}
        returned = self.leaves(result, "result")
        began = clock()
        try:
            for _, leaf in returned:
                if type(leaf) is self.ArrayImpl:
                    self.ArrayImpl.block_until_ready(leaf)
        except BaseException as error:  # a computation that fails only when its result is awaited
            return {"ok": False, "exception": type(error).__name__, "error": error_text(error, self.filename),
                    "placements": []}
        timing["run_s"] += clock() - began  # what it computed asynchronously, awaited
        reply: CallReply = {"ok": True, "value": self.describe_value(returned), "timing": timing,
                 "placements": self.placements_of(events, leaves, self.describe_sharding), "intact": intact,
                 "jit_calls": recorder.jit_calls(events, leaves, returned),
                 "compilations": recorder.compilations(events), "host": recorder.host_work(events, returned)}
        if swapped is not None:
            reply["swapped"] = swapped
        if mode == "full":
            reply["programs"] = recorder.programs(events)
            reply["between_bytes"] = self.held_between(events, leaves, returned)
            reply["program"] = self.program_of_call(events, leaves, returned, self.describe_sharding,
                                                    lambda v: type(v) is self.ArrayImpl, self.replayer.follows)
            kept = [a for a in self.jax.live_arrays() if id(a) not in alive] \
                if alive is not None and not recorder.holds_donated() else []
            reply["account"] = self.account_of_call(events, leaves, returned, self.jax, self.np,
                                                    self.describe_sharding, self.concrete, self.is_staged,
                                                    recorder.owner_of, kept)
        return reply

    def trace(self, named: list[list[Any]]) -> TraceReply:
        values, leaves = self.arguments(named)
        static = tuple(i for i, v in enumerate(values) if isinstance(v, (bool, int, float)))
        traced = [leaf for leaf in leaves if not isinstance(leaf[1], (bool, int, float))]
        try:
            closed, shape = self.jax.make_jaxpr(self.function, static_argnums=static, return_shape=True)(*values)
        except BaseException as error:
            return {"ok": False, "exception": type(error).__name__, "error": error_text(error, self.filename)}
        outputs = [path for path, _ in self.leaves(shape, "result")]
        return {"ok": True, "program": self.program_of(closed, self.describe_sharding, [p for p, _ in traced], outputs)}

    def serve(self) -> None:
        jax, clock = self.jax, self.clock
        import resource
        set_up = self.started.get("set_up", clock())
        devices = [str(d) for d in jax.devices()]  # the backend starts here
        backend = clock()
        ready: Ready = {"op": "ready", "jax": jax.__version__, "devices": devices,
                        "platform": jax.default_backend(), "protections": self.protections,
                        "memory_limit": resource.getrlimit(resource.RLIMIT_AS)[0]}
        ready["timing"] = {**self.started, "set_up": set_up, "backend": backend, "sent": clock()}
        write_message(self.outbox, ready)
        while True:
            try:
                request = read_message(self.inbox)
            except ChannelClosed:
                return
            op = request.get("op")
            if op == "exit":  # what it printed is in the pipe before the grader hears back (then it is killed)
                for stream in (sys.stdout, sys.stderr):
                    try:
                        stream.flush()
                    except Exception:  # noqa: BLE001 (a stream the submission replaced and broke)
                        pass
                write_message(self.outbox, {"op": "closed"})
                return
            reply: Reply
            try:
                if op == "load":
                    demo_s = request.get("demo_s")
                    reply = self.load(request["path"], request["display_name"], request["function"],
                                      int(request.get("arity", 1)), request.get("factory") is True,
                                      float(demo_s) if type(demo_s) in (int, float) else None)
                elif op == "call":
                    reply = self.call(request["arguments"], request.get("mode", "placements"),
                                      request.get("counterfactual"), request.get("fresh") is True)
                elif op == "trace":
                    reply = self.trace(request["arguments"])
                else:
                    reply = {"ok": False, "error": f"unknown request {op!r}"}
            except Exception as error:  # the grader's own failure: say so instead of dying
                reply = {"ok": False, "internal": True, "error": f"grader error: {type(error).__name__}: {error}"}
            data = frame(reply)
            if not fits(data):  # the grader would refuse it as the channel's flood: say why instead
                data = frame(_too_large(len(data) - HEADER.size))
            write_frame(self.outbox, data)


def _too_large(length: int) -> CallReply:
    """Instead of a reply larger than the grader reads (``grader.wire.fits``): what the call did
    cannot be judged, and the function is what made it so large."""
    return {"ok": False, "exception": "RecordTooLarge", "placements": [],
            "error": f"what this call did is too large for the grader to read ({length:,} bytes of record): make "
                     "fewer JAX operations per call, for example a jitted loop (jax.lax.fori_loop, jax.lax.scan) "
                     "instead of a Python loop of eager operations, and return less"}


def _skipped(skipped: list[Skipped]) -> dict[str, Any]:
    """The load reply's account of skipped cells: the first ``MAX_SKIPPED``, and how many in all."""
    return {"skipped": skipped[:MAX_SKIPPED], "skipped_count": len(skipped)} if skipped else {}


class _TooBig:
    """Stands for a returned structure with more leaves than any answer has."""

    def __init__(self, count: int) -> None:
        self.count = count

    def __repr__(self) -> str:
        return f"<a structure of {self.count} leaves>"


