"""The sandboxed side of grading: runs inside a child process, never in the grader's.

It imports JAX for the exercise's device count, puts its observers in place *before* the
submission is imported, then answers the parent's requests over a private channel:
``load`` (import the file, find the function), ``call`` (run it on one input and describe
what came back and which placements happened), ``trace`` (the program JAX records for it),
``exit``. It describes raw facts only; every judgement is made by the parent.
This module imports nothing from the grader but the channel, so it starts fast.
"""
from __future__ import annotations

import inspect
import os
import sys
import traceback
import types
import warnings
from typing import Any, Callable

from grader.errors import ChannelClosed
from grader.sandbox.protocol import decode_array, encode_array, read_message, write_message

MAX_RETURNED_ELEMENTS = 1 << 20
_MISSING = object()


class _Pinned:
    """A module's attributes as they were at startup (later ones are looked up live): the
    grader's own references, which a submission patching ``jax.make_jaxpr`` cannot reach."""

    def __init__(self, module: types.ModuleType, **overrides: Any) -> None:
        self.__dict__.update(vars(module), **overrides)
        self.__dict__["_module"] = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_module"], name)


def _version_tag(namespace: dict[str, Any]) -> Any:
    """A live view of the dict's PEP 509 version tag, which CPython 3.11 (what jaxgrade runs
    on) changes on every write to that dict and never on a read; None elsewhere, and then
    ``restore`` compares every entry. ``_version_tags_work`` checks the view before use."""
    if sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11):
        return None
    import ctypes
    # PyDictObject: PyObject_HEAD (refcount, type), ma_used, then the 64-bit ma_version_tag.
    return ctypes.c_uint64.from_address(id(namespace) + 3 * ctypes.sizeof(ctypes.c_ssize_t))


def _version_tags_work() -> bool:
    """Whether the tag, read where ``_version_tag`` reads it, moves on every kind of write to
    a scratch dict (add, replace, delete) and stays put on a read."""
    probe: dict[str, Any] = {"kept": 1}
    tag = _version_tag(probe)
    if tag is None:
        return False
    seen = [tag.value]
    probe["added"] = 2
    seen.append(tag.value)
    probe["kept"] = 3
    seen.append(tag.value)
    del probe["added"]
    seen.append(tag.value)
    _ = probe["kept"]
    return len(set(seen)) == 4 and tag.value == seen[-1]


class _Namespace:
    """One pinned namespace: what it held at startup, and its version tag when last made so."""

    def __init__(self, owner: Any, namespace: dict[str, Any], saved: dict[str, Any], tagged: bool) -> None:
        self.owner, self.namespace, self.saved = owner, namespace, saved
        self.tag = _version_tag(namespace) if tagged else None
        self.clean = self.tag.value if self.tag is not None else None

    def unchanged(self) -> bool:
        return self.tag is not None and self.tag.value == self.clean

    def mark_clean(self) -> None:
        if self.tag is not None:
            self.clean = self.tag.value


class _Pins:
    """Functions and classes of JAX, NumPy and the standard library as they were before the
    submission was imported. ``restore`` puts back whatever it replaced, deleted, or added
    to a class (a ``sharding`` property on jax.Array, an unwrapped device_put observer), so
    observations are always taken with the original machinery. Only callables and modules
    of modules are kept: JAX keeps data (caches, config) in module globals too.
    It runs around every call of the student's function, so it first asks each namespace's
    version tag whether anything was written there since it was last clean: comparing every
    entry of some 20 namespaces costs ~0.1 ms, asking them costs ~2 us."""

    def __init__(self, modules: list[types.ModuleType], objects: list[Any]) -> None:
        tagged = _version_tags_work()
        self.modules = [_Namespace(m, vars(m), {k: v for k, v in vars(m).items()
                                                if callable(v) or isinstance(v, types.ModuleType)}, tagged)
                        for m in modules]
        # A class's vars() is a read-only proxy; its tag is that of the dict behind it.
        self.objects = [_Namespace(o, _dict_behind(vars(o)), dict(vars(o)), tagged) for o in objects]

    def restore(self) -> None:
        """Undo the submission's patches."""
        for pinned in self.modules:
            if pinned.unchanged():
                continue
            current = pinned.namespace
            for name, value in pinned.saved.items():
                if current.get(name, _MISSING) is not value:
                    current[name] = value
            pinned.mark_clean()
        for pinned in self.objects:
            if pinned.unchanged():
                continue
            owner, current = pinned.owner, pinned.namespace
            for name in [n for n in current if n not in pinned.saved]:
                try:
                    delattr(owner, name)
                except (AttributeError, TypeError):
                    pass
            for name, value in pinned.saved.items():
                if current.get(name, _MISSING) is not value:
                    try:
                        setattr(owner, name, value)
                    except (AttributeError, TypeError):
                        pass
            pinned.mark_clean()


def _dict_behind(namespace: Any) -> dict[str, Any]:
    """The dict itself: ``vars(obj)`` for an instance, the one a class's mappingproxy wraps."""
    if isinstance(namespace, dict):
        return namespace
    import gc
    return next(r for r in gc.get_referents(namespace) if isinstance(r, dict))


def _error_text(error: BaseException, filename: str) -> str:
    """The exception with only the frames from the student's own file."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == filename]
    lines = [f"  {filename}, line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in frames[-5:]]
    head = "".join(traceback.format_exception_only(type(error), error)).strip()
    return "\n".join([head, *lines]) if lines else head


class Child:
    def __init__(self, inbox: int, outbox: int) -> None:
        self.inbox, self.outbox = inbox, outbox
        import base64
        import builtins
        import json

        import jax
        import numpy as np
        from jax._src import api, core, dispatch, pjit
        from jax._src import array as array_module
        from jax._src.array import ArrayImpl
        from jax._src.interpreters import partial_eval
        from jax.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding

        from grader.observe.jaxpr_graph import program_of

        self.jax, self.np = _Pinned(jax, numpy=_Pinned(jax.numpy)), _Pinned(np)
        self.program_of = program_of  # imported now: a later import could find the submission's "grader"
        # The shared compilation cache is read-only here (grader.sandbox.confine): a miss is not news.
        warnings.filterwarnings("ignore", message="Error writing persistent compilation cache entry")
        self.protections: dict[str, Any] = {}
        self.ArrayImpl, self.NamedSharding, self.SingleDeviceSharding = ArrayImpl, NamedSharding, SingleDeviceSharding
        self.function: Callable[..., Any] | None = None
        self.filename = "<submission>"
        self.placements: list[dict[str, Any]] | None = None
        self.argument: Any = None
        self.placed_x: list[Any] = []  # arrays an eager placement of x produced during this call
        self._install_observers(dispatch)
        # Everything below is fixed before the submission exists. Methods become instance
        # attributes (they win over the class's, so patching grader.observe.child.Child changes
        # nothing); every request starts, and every call of the student's function ends, by
        # undoing patches to JAX, NumPy and the standard library.
        self.pins = _Pins([jax, jax.numpy, jax.sharding, api, core, dispatch, pjit, partial_eval, array_module, np, json,
                           base64, os, builtins, traceback, inspect, sys.modules[__name__],
                           sys.modules["grader.sandbox.protocol"]],
                          [ArrayImpl, NamedSharding, Mesh, PartitionSpec, SingleDeviceSharding, dispatch.device_put_p,
                           core.Primitive, core.Tracer])
        for name, member in vars(Child).items():
            if inspect.isfunction(member) and not name.startswith("__"):
                setattr(self, name, member.__get__(self))
        for name in ("load", "call", "trace"):
            setattr(self, name, self._guarded(getattr(self, name)))

    def _guarded(self, handler: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        """The request handler, run with the original JAX; after ``load`` the student's function
        is wrapped so that its patches are undone as soon as it returns."""
        restore = self.pins.restore

        def guarded(*args: Any) -> dict[str, Any]:
            restore()
            reply = handler(*args)
            restore()
            if handler.__name__ == "load" and self.function is not None:
                self.function = _restoring(self.function, restore)
            return reply

        return guarded

    # -- observing placements while the student's code runs -------------------------------
    def _install_observers(self, dispatch: types.ModuleType) -> None:
        """Wrap JAX's two device_put paths. Both are looked up at call time, so aliases such
        as ``from jax import device_put`` are seen too."""
        eager, primitive_bind = dispatch._batched_device_put_impl, dispatch.device_put_p.bind

        def observed_eager(*xs: Any, devices: Any, **kwargs: Any) -> Any:
            self._record("eager", xs, devices)
            placed = eager(*xs, devices=devices, **kwargs)
            if self.placements is not None:  # moving a placed x again still places x (as in a trace)
                self.placed_x.extend(p for x, p in zip(xs, placed) if self._is_x(x))
            return placed

        def observed_bind(*xs: Any, **params: Any) -> Any:
            if any(isinstance(x, self.jax.core.Tracer) for x in xs):
                self._record("traced", xs, params.get("devices", ()))
            return primitive_bind(*xs, **params)

        dispatch._batched_device_put_impl = observed_eager
        dispatch.device_put_p.bind = observed_bind

    def _is_x(self, value: Any) -> bool:
        return value is self.argument or any(value is p for p in self.placed_x)

    def _record(self, phase: str, xs: tuple[Any, ...], devices: Any) -> None:
        if self.placements is None:
            return
        for x, target in zip(xs, devices):
            shape = getattr(x, "shape", None)
            self.placements.append({
                "phase": phase,
                "sharding": self.describe_sharding(target),
                "of_argument": self._is_x(x) if phase == "eager" else None,
                "input_shape": list(shape) if isinstance(shape, tuple) else None,
            })

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
            except ValueError:  # an AbstractMesh (inside some transformations) names no devices
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

    def describe_value(self, value: Any) -> dict[str, Any]:
        np = self.np
        kind = type(value)
        described: dict[str, Any] = {"type": f"{kind.__module__}.{kind.__qualname__}"}
        if kind is self.ArrayImpl:
            described["kind"] = "jax_array"
            described["sharding"] = self.describe_sharding(value.sharding)
            described["shards"] = self.describe_shards(value)
            array = np.asarray(value)
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
        if array.dtype.kind in "biufc" and array.size <= MAX_RETURNED_ELEMENTS:
            described["array"] = encode_array(array)
        return described

    # -- requests ----------------------------------------------------------------------------
    def load(self, path: str, display_name: str, function: str) -> dict[str, Any]:
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
        module = types.ModuleType(name)
        module.__file__ = path
        sys.modules[name] = module
        try:
            exec(code, module.__dict__)
        except BaseException as error:
            return {"ok": False, "stage": "import", "error": _error_text(error, display_name),
                    "exception": type(error).__name__}
        candidate = module.__dict__.get(function)
        if candidate is None:
            defined = sorted(k for k, v in module.__dict__.items()
                             if callable(v) and getattr(v, "__module__", None) == name)
            return {"ok": False, "stage": "function", "defined": defined}
        if not callable(candidate):
            return {"ok": False, "stage": "not_callable", "type": type(candidate).__name__}
        try:
            signature = inspect.signature(candidate)
        except (TypeError, ValueError):
            signature = None
        try:
            accepts_one = signature is None or signature.bind(object()) is not None
        except TypeError:
            accepts_one = False
        self.function = candidate
        return {"ok": True, "signature": f"{function}{signature}" if signature else function,
                "accepts_one": accepts_one}

    def argument_of(self, array: dict[str, Any]) -> Any:
        """The input as a JAX array on the default device, uncommitted, exactly as
        ``jnp.asarray`` makes it; ``device_put`` because ``jnp.asarray`` stages a copy that
        compiles once per new shape (5-30 ms each, several per submission)."""
        return self.jax.device_put(decode_array(array))

    def call(self, array: dict[str, Any]) -> dict[str, Any]:
        argument = self.argument_of(array)
        self.argument, self.placements = argument, []
        try:
            result = self.function(argument)
            if isinstance(result, self.ArrayImpl):
                result.block_until_ready()
        except BaseException as error:
            return {"ok": False, "exception": type(error).__name__,
                    "error": _error_text(error, self.filename), "placements": self.placements}
        finally:
            placements, self.placements, self.argument, self.placed_x = self.placements, None, None, []
        return {"ok": True, "value": self.describe_value(result), "placements": placements}

    def trace(self, array: dict[str, Any]) -> dict[str, Any]:
        argument = self.argument_of(array)
        try:
            closed = self.jax.make_jaxpr(self.function)(argument)
        except BaseException as error:
            return {"ok": False, "exception": type(error).__name__, "error": _error_text(error, self.filename)}
        return {"ok": True, "program": self.program_of(closed, self.describe_sharding)}

    def serve(self) -> None:
        jax = self.jax
        write_message(self.outbox, {"op": "ready", "jax": jax.__version__,
                                    "devices": [str(d) for d in jax.devices()], "protections": self.protections})
        while True:
            try:
                request = read_message(self.inbox)
            except ChannelClosed:
                return
            op = request.get("op")
            if op == "exit":
                return
            try:
                if op == "load":
                    reply = self.load(request["path"], request["display_name"], request["function"])
                elif op == "call":
                    reply = self.call(request["input"])
                elif op == "trace":
                    reply = self.trace(request["input"])
                else:
                    reply = {"ok": False, "error": f"unknown request {op!r}"}
            except Exception as error:  # the grader's own failure: say so instead of dying
                reply = {"ok": False, "internal": True, "error": f"grader error: {type(error).__name__}: {error}"}
            write_message(self.outbox, reply)


def _restoring(function: Callable[..., Any], restore: Callable[[], None]) -> Callable[..., Any]:
    def call_then_restore(x: Any) -> Any:
        try:
            return function(x)
        finally:
            restore()
    return call_then_restore


def _forget_grader() -> None:
    """Drop the grader's modules from ``sys.modules`` and its folder from ``sys.path``: an
    ``import grader.observe.child`` in the submission then gets a fresh copy (or nothing), and
    patching that copy touches nothing the running grader uses."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    for name in [n for n in sys.modules if n == "grader" or n.startswith("grader.")]:
        del sys.modules[name]
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != here]


def main() -> None:
    """``python -I -c BOOT inbox outbox [policy]``: the exec'd child. A child forked from a
    warm process calls ``start`` directly."""
    policy = None
    if len(sys.argv) > 3:
        from grader.sandbox.confine import Policy
        policy = Policy.from_json(sys.argv[3])
    start(int(sys.argv[1]), int(sys.argv[2]), policy)


def start(inbox: int, outbox: int, policy: Any = None) -> None:
    """Import JAX (backend not started), put the observers in place, confine the process as
    ``policy`` (a ``grader.sandbox.confine.Policy``) says, then serve; never returns."""
    try:
        for fd in (inbox, outbox):
            os.set_inheritable(fd, False)  # programs the submission runs do not get the channel
        child = Child(inbox, outbox)
        if policy is not None:
            from grader.sandbox.confine import confine
            child.protections = confine(policy)
        _forget_grader()
    except BaseException as error:
        write_message(outbox, {"op": "failed", "error": f"{type(error).__name__}: {error}"})
        os._exit(70)
    child.serve()
    sys.stdout.flush()
    os._exit(0)  # threads the submission left behind must not keep the process alive


if __name__ == "__main__":
    main()
