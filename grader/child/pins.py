"""The grader's own references in the child, kept from a submission that patches JAX.

``take_originals`` holds on to JAX and NumPy as the grader reaches them, the recorder (its
hooks installed) and the namespaces (``_Pins``) put back around every request and every call
of the student's function, before any submission exists. The zygote takes them once, before
it forks (``before_fork``); an exec'd child takes its own (``originals``).

Kept now that the witness re-derives what verdicts rest on: not to make the child's record
trustworthy (nothing from the child is taken on trust), but so that honest observation keeps
working beside code that patches JAX, NumPy or the standard library, on purpose or in passing
(a patched ``jnp.sum`` left in place would change the values of every later call, and the
recorder, the account and the description of the result would run through the patch and
could fail where the student's code did nothing wrong). Putting the namespaces back costs
~2 us a call where CPython's dict version tags can be read (``_version_tag``).
"""
from __future__ import annotations

import inspect
import os
import sys
import traceback
import types
from typing import Any, NamedTuple


_MISSING = object()
# The child's own modules, whose functions and classes a submission must not replace either.
CHILD_MODULES = ("grader.child.entry", "grader.child.server", "grader.child.pins", "grader.child.jax_patches",
                 "grader.wire", "grader.child.recorder", "grader.child.jaxpr_graph", "grader.child.ownership",
                 "grader.child.swap", "grader.child.route_host", "grader.child.route_eager", "grader.child.route_jit",
                 "grader.child.route_compile", "grader.child.route_aot", "grader.child.jit_calls",
                 "grader.child.dataflow", "grader.child.compiled", "grader.child.account",
                 "grader.child.sharding_data", "grader.child.callbacks")
# The CPython releases whose dicts carry PEP 509's ma_version_tag where ``_version_tag`` reads it,
# moved on every write (add, replace, delete) and never on a read: 3.11; 3.12 and 3.13 keep it,
# deprecated, with its low bits given to dict watchers. 3.14 changed the field (not tried here).
TAGGED_PYTHONS = frozenset({(3, 11), (3, 12), (3, 13)})


def tagged_python() -> bool:
    """Whether this interpreter's dicts carry a version tag where ``_version_tag`` reads it."""
    return sys.implementation.name == "cpython" and sys.version_info[:2] in TAGGED_PYTHONS


class _Pinned:
    """A module's attributes as they were at startup (later ones are looked up live): the
    grader's own references, which a submission patching ``jax.make_jaxpr`` cannot reach."""

    def __init__(self, module: types.ModuleType, **overrides: Any) -> None:
        self.__dict__.update(vars(module), **overrides)
        self.__dict__["_module"] = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_module"], name)


def _version_tag(namespace: dict[str, Any]) -> Any:
    """A live view of the dict's PEP 509 version tag, which CPython 3.11 to 3.13
    (``TAGGED_PYTHONS``) changes on every write to that dict and never on a
    read; None elsewhere, and then ``restore`` compares every entry. ``_version_tags_work``
    checks the view before use."""
    if not tagged_python():
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

    def adopt(self, patched: list[tuple[Any, str]]) -> None:
        """Keep the grader's own patches (``grader.child.jax_patches``, made after the pins were
        taken in the zygote) as what ``restore`` puts back."""
        for owner, name in patched:
            for pinned in self.modules:
                if pinned.owner is owner:
                    pinned.saved[name] = getattr(owner, name)

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


class _Originals(NamedTuple):
    """What the grader holds on to before any submission exists: JAX and NumPy as it reaches
    them, the recorder (its hooks installed), and the namespaces put back around every call."""
    jax: _Pinned
    np: _Pinned
    recorder: Any
    pins: _Pins


def take_originals() -> _Originals:
    import base64
    import builtins
    import json

    import jax
    import numpy as np
    from jax._src import api, compiler, core, custom_derivatives, dispatch, pjit
    from jax._src import array as array_module
    from jax._src import shard_map as shard_map_module
    from jax._src.array import ArrayImpl
    from jax._src.interpreters import partial_eval
    from jax.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding

    from grader.child import recorder

    pinned_jax, pinned_np = _Pinned(jax, numpy=_Pinned(jax.numpy), tree_util=_Pinned(jax.tree_util),
                                    random=_Pinned(jax.random)), _Pinned(np)
    observer = recorder.Recorder(core, dispatch, pjit, jax.make_jaxpr, compiler, ArrayImpl, np)
    # Every request starts, and every call of the student's function ends, by undoing patches
    # to JAX, NumPy and the standard library (the recorder's hooks included).
    modules = [jax, jax.numpy, jax.sharding, jax.tree_util, jax.random, api, compiler, core, dispatch, pjit,
               shard_map_module, partial_eval, array_module, np, json, base64, os, builtins, traceback,
               inspect, *(sys.modules[name] for name in CHILD_MODULES if name in sys.modules)]
    objects = [ArrayImpl, NamedSharding, Mesh, PartitionSpec, SingleDeviceSharding, dispatch.device_put_p,
               core.Primitive, core.Tracer, core.EvalTrace, recorder.Recorder, custom_derivatives.custom_vjp,
               custom_derivatives.custom_jvp]
    return _Originals(pinned_jax, pinned_np, observer, _Pins(modules, objects))


# Taken in the zygote (grader.sandbox.pool calls before_fork) before it forks, so that a
# forked child starts with them instead of copying some 20 namespaces itself: each copy raises
# the refcount of everything in them, and in a forked child every such write copies a page
# (~1,500 pages, ~9 ms of a child's CPU). The first request's restore() puts back whatever
# changed since.
_ORIGINALS: _Originals | None = None


def before_fork() -> None:
    """In the zygote, once its imports are done; an exec'd child takes its own (``originals``)."""
    global _ORIGINALS
    _ORIGINALS = take_originals()


def originals() -> _Originals:
    """The zygote's, in a forked child; taken now in an exec'd one."""
    return _ORIGINALS or take_originals()
