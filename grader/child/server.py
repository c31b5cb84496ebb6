"""The request server of the sandboxed child: runs inside a child process, never in the grader's.

Started by ``grader.child.entry`` once JAX is imported for the exercise's device count and its
observers are in place (``grader.child.recorder`` and its routes), *before* the submission is imported, it
answers the parent's requests over a private channel (``grader.wire``): ``load`` (import the
file, find the function; a converted notebook runs cell by cell, ``Child.run_cells``), ``call``
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
import traceback
import types
import warnings
from typing import Any, Callable

from grader.child.pins import originals
from grader.child.startup_output import restore as restore_output
from grader.errors import CellFailed, CellTimeout, ChannelClosed
from grader.wire import (HEADER, WIDENED, CallReply, LoadReply, Ready, Reply, Skipped, TraceReply, ValueData,
                         carries, decode_array, encode_array, fits, frame, read_message, write_frame, write_message)

MAX_RETURNED_ELEMENTS = 1 << 20
MAX_RETURNED_LEAVES = 256
# A notebook's cells skipped because they failed: this many described, each in this many characters.
MAX_SKIPPED, MAX_SKIPPED_TEXT = 20, 200
# A notebook cell the function does not need is not run with less time than this (Child.run_cells).
MIN_CELL_S = 0.05


def _error_text(error: BaseException, filename: str) -> str:
    """The exception with only the frames from the student's own file, and no file of the
    grader's or JAX's by its absolute path."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == filename]
    lines = [f"  {filename}, line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in frames[-5:]]
    head = _error_head(error)
    return "\n".join([head, *lines]) if lines else head


def _error_head(error: BaseException) -> str:
    """``Type: message``, with no file by its absolute path. A failure of JAX's compiler or
    runtime keeps the first line of its diagnostic alone: the rest is a compiler dump (MLIR
    operations, the grader's call sites) that says nothing a student can act on."""
    import re
    if type(error).__name__ in ("JaxRuntimeError", "XlaRuntimeError"):
        first = next((line for line in str(error).splitlines() if line.strip()), "")
        head = f"{type(error).__name__}: {re.sub(r'[^ ]*:[0-9]+:[0-9]+: (error: )?', '', first, count=1)}"
    else:
        head = "".join(traceback.format_exception_only(type(error), error)).strip()
    return re.sub(r"(?<![\w.])/(?:[^\s/:'\"()]+/)+([^\s/:'\"()]+)", r"\1", head)  # /abs/path/file.py -> file.py


class Child:
    def __init__(self, inbox: int, outbox: int) -> None:
        self.inbox, self.outbox = inbox, outbox
        from jax._src.array import ArrayImpl
        from jax.sharding import NamedSharding, SingleDeviceSharding

        from grader.child.cells import read_cells
        from grader.child.compiled import held_between
        from grader.child.dataflow import placements_of, program_of_call
        from grader.child.jaxpr_graph import program_of
        from grader.child.replay import Replayer

        self.read_cells = read_cells
        self.jax, self.np, self.recorder, self.pins, self.watch = originals()
        # imported now: a later import could find the submission's "grader"
        self.program_of, self.program_of_call, self.placements_of = \
            program_of, program_of_call, placements_of
        self.replayer = Replayer(self.jax, self.np)
        self.held_between = held_between
        # The shared compilation cache is read-only here (grader.child.confine): a miss is not news.
        warnings.filterwarnings("ignore", message="Error writing persistent compilation cache entry")
        warnings.filterwarnings("ignore", message="Error reading persistent compilation cache entry")
        self.protections: dict[str, dict[str, Any]] = {}
        self.ArrayImpl, self.NamedSharding, self.SingleDeviceSharding = ArrayImpl, NamedSharding, SingleDeviceSharding
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
        """The request handler, run with the original JAX, and again after it; what the
        submission changed in JAX, NumPy, the standard library or the grader (at import, or
        in a factory) is named in the reply (``tampered``) and put back."""
        restore, watch = self.pins.restore, self.watch

        def guarded(*args: Any) -> Reply:
            restore()
            reply = handler(*args)
            found = watch.changes() if watch.cheap or handler.__name__ != "call" else []
            restore()
            if found:
                reply["tampered"] = [*reply.get("tampered", []), *found]
            return reply

        return guarded

    # -- describing values ---------------------------------------------------------------
    def describe_sharding(self, target: Any) -> dict[str, Any]:
        if target is None:
            return {"type": "default"}
        if isinstance(target, self.jax.Device):
            return {"type": "Device", "devices": [target.id]}
        if isinstance(target, self.NamedSharding):
            mesh = target.mesh
            try:
                devices = [int(d.id) for d in mesh.devices.flat]
            except (AttributeError, ValueError):  # an AbstractMesh (inside some transformations) names no devices
                devices = None
            return {
                "type": "NamedSharding",
                "mesh_devices": devices,
                "mesh_shape": [int(n) for n in dict(mesh.shape).values()],
                "axis_names": [str(a) for a in mesh.axis_names],
                "spec": [list(p) if isinstance(p, tuple) else p for p in target.spec],
                "memory_kind": target.memory_kind,
            }
        device_set = getattr(target, "device_set", None)
        devices = sorted(int(d.id) for d in device_set) if device_set else []
        return {"type": type(target).__name__, "devices": devices}

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
                self.run_cells(source, cells, module.__dict__, skipped, function, demo_s)
        except CellFailed as failed:
            return {"ok": False, "stage": "import", "error": _error_text(failed.error, display_name),
                    "exception": type(failed.error).__name__, "cell": failed.cell, "needed": failed.needed,
                    **_skipped(skipped)}
        except BaseException as error:
            return {"ok": False, "stage": "import", "error": _error_text(error, display_name),
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
                return {"ok": False, "stage": "factory", "error": _error_text(error, display_name),
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

    def run_cells(self, source: bytes, cells: list[Any], namespace: dict[str, Any],
                  skipped: list[Skipped], function: str = "", demo_s: float | None = None) -> None:
        """Run a converted notebook cell by cell in one namespace, as Jupyter's Run All does,
        except that a cell the function does not need that raises an Exception (or calls
        sys.exit) is skipped, added to ``skipped`` (number, line in the cell, error), and the
        next one runs: Jupyter shows the error and the student goes on. A needed cell that
        fails, and any cell that raises KeyboardInterrupt or another BaseException, raises
        ``CellFailed``; ``os._exit`` ends the child as it would any file. Each cell is
        compiled from the file's own syntax tree, so its line numbers are the file's.

        Time: the cells the function does not need have ``demo_s`` seconds in all (a share of
        the load's limit, so the needed cells keep the rest), each at most half of what is left
        of them (a demo after one that hung still runs): a timer (SIGALRM, sent to this thread)
        interrupts one still running then, and it is skipped as one that did not finish; once
        less than ``MIN_CELL_S`` would be left, such cells are skipped without running. A cell
        that catches the interruption and goes on is stopped by the load's own limit, in the
        parent, as any import that does not finish.

        The cell marked ``graded`` holds the definition of ``function`` the kernel ran last
        (``grader.notebook_runs``): once every cell ran, ``function`` is bound again to what
        that cell bound, whatever a cell below it (a draft run earlier) bound since."""
        import ast
        import bisect
        import signal
        import threading
        import time
        tree = compile(source, self.filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        # ``from __future__`` holds for the whole file: each cell is compiled with its flags
        flags = 0
        for statement in tree.body:
            if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
                import __future__
                for alias in statement.names:
                    flags |= getattr(__future__, alias.name).compiler_flag
        starts = [cell.first_line for cell in cells]
        bodies: dict[int, list[ast.stmt]] = {}
        for statement in tree.body:  # a statement belongs to the cell it starts in
            bodies.setdefault(max(bisect.bisect_right(starts, statement.lineno) - 1, 0), []).append(statement)
        # None: no bound of their own (signal handlers can be set only in the main thread)
        left = demo_s if demo_s is not None and demo_s > 0 and threading.current_thread() is threading.main_thread() \
            else None
        graded: list[Any] = []  # what the graded cell bound to ``function``
        alarm = _Alarm()
        previous = signal.getsignal(signal.SIGALRM)
        try:
            for index, body in sorted(bodies.items()):
                cell = cells[index]
                code = compile(ast.Module(body=body, type_ignores=[]), self.filename, "exec", flags,
                               dont_inherit=True)
                bounded = left is not None and not cell.needed
                share = left / 2 if left is not None else 0.0  # each may take half of what is left
                if bounded and share < MIN_CELL_S:
                    skipped.append({"cell": cell.number, "line": None, "stopped": True,
                                    "error": f"was not run: the cells your function does not need had used up their "
                                             f"{demo_s:.3g} s"})
                    continue
                started = time.monotonic()
                try:
                    try:
                        if bounded:
                            signal.signal(signal.SIGALRM, alarm.interrupt)
                            alarm.arm(share)
                        exec(code, namespace)
                    finally:
                        alarm.disarm()
                except CellTimeout as error:
                    if not bounded:  # not the timer's: the cell raised it itself
                        raise CellFailed(cell.number, cell.needed, error) from None
                    skipped.append({"cell": cell.number, "line": None, "stopped": True,
                                    "error": f"did not finish within {share:.2g} s (half the time left to the cells "
                                             f"your function does not need, {demo_s:.3g} s in all)"})
                except (Exception, SystemExit) as error:
                    if cell.needed:
                        raise CellFailed(cell.number, True, error) from None
                    # the cell's own statement that raised, counted from the cell's first line as Jupyter shows it
                    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == self.filename]
                    line = frames[0].lineno - cell.first_line if frames and frames[0].lineno else None
                    first = (_error_head(error).splitlines() or [type(error).__name__])[0]
                    skipped.append({"cell": cell.number, "line": line, "error": first[:MAX_SKIPPED_TEXT]})
                except BaseException as error:
                    raise CellFailed(cell.number, cell.needed, error) from None
                finally:
                    if bounded:
                        left -= time.monotonic() - started
                if cell.graded and function in namespace:
                    graded[:] = [namespace[function]]
        finally:
            alarm.disarm()
            if left is not None and previous is not None:  # None: a handler not set from Python
                signal.signal(signal.SIGALRM, previous)
        if graded:
            namespace[function] = graded[0]

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
        # what the call left changed, named and put back before anything of it is read (without
        # version tags, comparing every namespace is for the full record only)
        tampered = self.watch.changes() if self.watch.cheap or mode == "full" else []
        swapped = recorder.swap[0].count if recorder.swap[0] is not None else None
        recorder.swap[0] = None
        self.pins.restore()
        if raised is not None:
            return {"ok": False, "exception": type(raised).__name__, "error": _error_text(raised, self.filename),
                    "placements": self.placements_of(events, leaves, self.describe_sharding),
                    **({"tampered": tampered} if tampered else {}), "timing": timing}
        returned = self.leaves(result, "result")
        began = clock()
        try:
            for _, leaf in returned:
                if type(leaf) is self.ArrayImpl:
                    self.ArrayImpl.block_until_ready(leaf)
        except BaseException as error:  # a computation that fails only when its result is awaited
            return {"ok": False, "exception": type(error).__name__, "error": _error_text(error, self.filename),
                    "placements": []}
        timing["run_s"] += clock() - began  # what it computed asynchronously, awaited
        reply: CallReply = {"ok": True, "value": self.describe_value(returned), "timing": timing,
                 "placements": self.placements_of(events, leaves, self.describe_sharding), "intact": intact,
                 "jit_calls": recorder.jit_calls(events, leaves, returned),
                 "compilations": recorder.compilations(events), "host": recorder.host_work(events)}
        if swapped is not None:
            reply["swapped"] = swapped
        if tampered:
            reply["tampered"] = tampered
        if mode == "full":
            reply["programs"] = recorder.programs(events)
            reply["between_bytes"] = self.held_between(events, leaves, returned)
            reply["program"] = self.program_of_call(events, leaves, returned, self.describe_sharding,
                                                    lambda v: type(v) is self.ArrayImpl, self.replayer.follows)
        return reply

    def trace(self, named: list[list[Any]]) -> TraceReply:
        values, leaves = self.arguments(named)
        static = tuple(i for i, v in enumerate(values) if isinstance(v, (bool, int, float)))
        traced = [leaf for leaf in leaves if not isinstance(leaf[1], (bool, int, float))]
        try:
            closed, shape = self.jax.make_jaxpr(self.function, static_argnums=static, return_shape=True)(*values)
        except BaseException as error:
            return {"ok": False, "exception": type(error).__name__, "error": _error_text(error, self.filename)}
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
        self.watch.rebase()  # what the grader and JAX's backend changed up to now is no submission's doing
        ready["timing"] = {**self.started, "set_up": set_up, "backend": backend, "sent": clock()}
        write_message(self.outbox, ready)
        while True:
            try:
                request = read_message(self.inbox)
            except ChannelClosed:
                return
            op = request.get("op")
            if op == "exit":
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


class _Alarm:
    """Interrupts the thread that armed it after some seconds, with SIGALRM sent to that thread
    (a signal sent to the process may land on one of JAX's threads, which would not wake a
    ``time.sleep`` in the cell). Each arming has its token: a signal that arrives after
    ``disarm`` (sent just before it) interrupts nothing."""

    def __init__(self) -> None:
        import threading
        self.lock = threading.Lock()
        self.token: object | None = None
        self.timer: Any = None

    def arm(self, seconds: float) -> None:
        import signal
        import threading
        token, thread = object(), threading.get_ident()

        def ring() -> None:
            with self.lock:
                if self.token is token:
                    signal.pthread_kill(thread, signal.SIGALRM)

        with self.lock:
            self.token = token
        self.timer = threading.Timer(seconds, ring)
        self.timer.daemon = True
        self.timer.start()

    def disarm(self) -> None:
        with self.lock:
            self.token = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def interrupt(self, number: int, frame: Any) -> None:
        # no lock here: the handler runs in the thread that may hold it (in ``disarm``)
        if self.token is not None:
            self.token = None  # once: a cell that catches it is left to the load's own limit
            raise CellTimeout()


class _TooBig:
    """Stands for a returned structure with more leaves than any answer has."""

    def __init__(self, count: int) -> None:
        self.count = count

    def __repr__(self) -> str:
        return f"<a structure of {self.count} leaves>"


