"""Tamper evidence (runs in the child): which functions and classes of JAX, jaxlib, NumPy,
ml_dtypes, the standard library and the grader itself the submission replaced, deleted, or
added to a class, at import or during a call.

``grader.child.pins`` puts back a few namespaces the grader reads through around every call,
silently; this names every change, in every module of those packages loaded before the
submission and every class they define (some 600 modules and 3,000 classes), so that a
report can say "your file replaces jax._src.interpreters.pxla.MeshExecutable.xla_extension_executable"
and the structure checks, whose evidence such a change could forge, fail. What it finds it
also puts back, so the grader goes on reading with JAX's own code.

Asking 3,600 namespaces after every call must cost next to nothing: on CPython 3.11 to 3.13 each
dict carries a version tag that moves on every write to it and never on a read (PEP 509; see
``pins._version_tag`` and :data:`TAGGED_PYTHONS`), and the tags of all the watched dicts are gathered in one NumPy
indexing of the process's memory (~10 us). Only a namespace whose tag moved is compared
entry by entry, against a copy taken before the submission existed. Data (caches, counters,
configuration: ``jax.config.update`` stays allowed) is not compared: only what runs
(functions, classes, modules, descriptors). A patch put back before the call returns is not
seen by comparing, but its write is: a namespace the grader reads through while a call runs
(``guard``: the modules and classes its hooks sit in or read, the grader's own, the standard
library's it uses) is never written by honest work, so a tag of one of them that moved with
nothing left changed is a patch made and undone within the call, named as such ("rewrites
jax._src.pjit while your code runs, and puts it back"). A primitive's own attributes (its
``name``, which every check reads) are watched as data: renaming ``add_p`` to ``psum`` forges a
collective.
"""
from __future__ import annotations

import ctypes
import gc
import sys
import types
from typing import Any

# The packages whose modules are watched (besides the standard library's).
PACKAGES = ("jax", "jaxlib", "numpy", "ml_dtypes", "grader")
# Standard-library modules left out: replacing print or sys.excepthook forges nothing the
# grader reads (its hooks hold the builtins they use, and pins put builtins back).
UNWATCHED = frozenset({"builtins", "sys", "__main__"})
MAX_NAMED = 16  # changes named per reply: a submission that replaces more is no better for it
_TAG_OFFSET = 3 * ctypes.sizeof(ctypes.c_ssize_t)  # PyDictObject: refcount, type, ma_used, ma_version_tag
# The CPython releases whose dicts carry PEP 509's ma_version_tag at _TAG_OFFSET, moved on every
# write (add, replace, delete; a class's attribute set or deleted) and never on a read: 3.11;
# 3.12 and 3.13 keep it, deprecated, with its low bits given to dict watchers (a write moves it by
# 256 or 4096, and a watcher added to a dict moves it too: a namespace compared for nothing).
# 3.14 changed the field (not tried here). On any other interpreter every namespace is compared
# entry by entry, at the import, the trace and the full record only (~26 ms for 3,400 namespaces
# on CPython 3.12, against ~10 us with the tags). Each use also checks that a write moves the tag.
TAGGED_PYTHONS = frozenset({(3, 11), (3, 12), (3, 13)})


def tagged_python() -> bool:
    """Whether this interpreter's dicts carry a version tag where ``_TAG_OFFSET`` reads it."""
    return sys.implementation.name == "cpython" and sys.version_info[:2] in TAGGED_PYTHONS


def _watched(name: str) -> bool:
    top = name.partition(".")[0]
    return name not in UNWATCHED and (top in PACKAGES or top in sys.stdlib_module_names)


def _runs(value: Any) -> bool:
    """Code, not data: what a replacement could make the grader run."""
    return callable(value) or isinstance(value, types.ModuleType) or hasattr(type(value), "__get__")


class _Namespace:
    """One module's, class's or primitive's dict, and a copy of it from before the submission
    existed; ``data``: whether plain values (a primitive's name) count as well as code."""
    __slots__ = ("label", "owner", "namespace", "saved", "is_class", "data")

    def __init__(self, label: str, owner: Any, namespace: dict[str, Any], is_class: bool, data: bool = False) -> None:
        self.label, self.owner, self.namespace, self.is_class, self.data = label, owner, namespace, is_class, data
        self.saved = namespace.copy()

    def changes(self) -> list[tuple[str, str]]:
        """(how, name) for each change that matters, put back as it was."""
        found: list[tuple[str, str]] = []
        current = self.namespace
        for name, value in self.saved.items():
            now = current.get(name, _MISSING)
            if now is not value and (_runs(value) or (self.data and not _same_data(now, value))):
                found.append(("deletes" if now is _MISSING else "replaces", name))
                self._put_back(name, value)
        # A method or property added to a class (a module gains submodules as it imports them,
        # and an extension type its nested types as they are first used)
        if self.is_class:
            for name in [n for n in current if n not in self.saved
                         and _runs(current[n]) and not isinstance(current[n], type)]:
                found.append(("adds", name))
                self._put_back(name, _MISSING)
        return found

    def _put_back(self, name: str, value: Any) -> None:
        try:
            if value is _MISSING:
                delattr(self.owner, name)
            elif self.is_class:
                setattr(self.owner, name, value)
            else:
                self.namespace[name] = value
        except (AttributeError, TypeError):
            pass  # a type that refuses: it stays named all the same


_MISSING = object()


def _same_data(now: Any, saved: Any) -> bool:
    return type(now) is type(saved) and isinstance(saved, (str, int, float, bool, type(None))) and now == saved


class Watch:
    """The watched namespaces, and their version tags when last clean."""

    def __init__(self) -> None:
        import numpy as np
        self._nonzero = np.nonzero
        modules = [(name, m) for name, m in list(sys.modules.items())
                   if isinstance(m, types.ModuleType) and _watched(name)]
        spaces = [_Namespace(name, m, vars(m), False) for name, m in modules]
        seen: set[int] = set()
        for name, module in modules:
            for value in list(vars(module).values()):
                if isinstance(value, type) and id(value) not in seen and getattr(value, "__module__", None) == name:
                    seen.add(id(value))
                    behind = _dict_behind(vars(value))
                    if behind is not None:
                        spaces.append(_Namespace(f"{name}.{value.__qualname__}", value, behind, True))
        primitive = getattr(sys.modules.get("jax._src.core"), "Primitive", None)
        for name, module in modules:
            for key, value in list(vars(module).items()):
                if (primitive is not None and isinstance(value, primitive) and id(value) not in seen
                        and type(getattr(value, "__dict__", None)) is dict):
                    seen.add(id(value))
                    spaces.append(_Namespace(f"{name}.{key}", value, value.__dict__, False, data=True))
        self.spaces = spaces
        self.guarded: set[int] = set()  # indices of the namespaces no honest work writes
        self._gather = _tag_gatherer([s.namespace for s in spaces], np)
        self._clean = self._gather() if self._gather is not None else None

    @property
    def cheap(self) -> bool:
        """Whether asking costs next to nothing (version tags work here): then after every call."""
        return self._gather is not None

    def guard(self, owners: list[Any]) -> None:
        """Mark the namespaces of ``owners`` (modules and classes the grader reads through while
        a call runs) and of the modules the grader's own modules use (not packages: importing a
        submodule writes its package) as never written by honest work."""
        from_grader = [v for name, m in list(sys.modules.items()) if name.partition(".")[0] == "grader"
                       for v in vars(m).values() if isinstance(v, types.ModuleType)]
        wanted = {id(_namespace_of(o)) for o in [*owners, *from_grader] if not hasattr(o, "__path__")}
        self.guarded = {i for i, space in enumerate(self.spaces)
                        if id(space.namespace) in wanted or space.label.partition(".")[0] == "grader"}
        for i in self.guarded:  # a warning issued from a module's code adds its registry: one now, kept
            space = self.spaces[i]
            if not space.is_class and "__warningregistry__" not in space.namespace:
                space.namespace["__warningregistry__"] = {}
                space.saved = space.namespace.copy()
        self._mark_clean()  # taken before any child exists: no child copies these again (``rebase``)

    def rebase(self) -> None:
        """Once the child is ready, before the submission exists: what the grader changed since
        the copies were taken (its own patches, ``grader.child.jax_patches``, made after a
        zygote took them; JAX's backend starting) is what is put back from now on."""
        for i in self._moved():
            self.spaces[i].saved = self.spaces[i].namespace.copy()
        self._mark_clean()

    def changes(self) -> list[str]:
        """Each change since the last ask, as ``replaces jax.numpy.sum``, and put back."""
        moved = self._moved()
        if not moved:  # the usual answer: the tags just read are the clean ones (one read, not two)
            return []
        found = []
        for i in moved:
            changed = self.spaces[i].changes()
            found += [f"{how} {self.spaces[i].label}.{name}" for how, name in changed]
            if not changed and i in self.guarded and self._gather is not None:
                found.append(f"rewrites {self.spaces[i].label} while your code runs, and puts it back")
        self._mark_clean()  # after putting back, which moves the tags again
        return found[:MAX_NAMED]

    def _moved(self) -> list[int]:
        """The namespaces whose tag moved since the last clean read; with none, this read is the
        clean one from now on."""
        if self._gather is None:
            return list(range(len(self.spaces)))
        now = self._gather()
        moved = self._nonzero(now != self._clean)[0].tolist()
        if not moved:
            self._clean = now
        return moved

    def _mark_clean(self) -> None:
        if self._gather is not None:
            self._clean = self._gather()


def _namespace_of(owner: Any) -> Any:
    return _dict_behind(vars(owner)) if isinstance(owner, type) else vars(owner)


def _dict_behind(proxy: Any) -> dict[str, Any] | None:
    """The dict a class's mappingproxy wraps (its tag is that dict's)."""
    return next((r for r in gc.get_referents(proxy) if type(r) is dict), None)


def _tag_gatherer(namespaces: list[dict[str, Any]], np: Any) -> Any:
    """A function that reads the version tag of every dict of ``namespaces`` at once, as an
    array: one view of the memory from the lowest to the highest tag, indexed at each. None
    where the tags cannot be trusted (not a :data:`TAGGED_PYTHONS` release, or a tag that does not
    move as it must)."""
    if not tagged_python() or not namespaces:
        return None
    addresses = np.array([id(n) + _TAG_OFFSET for n in namespaces], dtype=np.uint64)
    base = int(addresses.min())
    if any(int(a - base) % 8 for a in addresses):
        return None
    memory = np.frombuffer((ctypes.c_uint64 * ((int(addresses.max()) - base) // 8 + 1)).from_address(base),
                           dtype=np.uint64)
    offsets = ((addresses - base) // 8).astype(np.intp)
    probe = namespaces[0]
    before = memory[offsets[0]]
    marker = object()
    key = f"__jaxgrade_probe_{id(marker)}"
    probe[key] = marker  # a write must move the tag: else this layout is not the one of TAGGED_PYTHONS
    moved = memory[offsets[0]] != before
    del probe[key]
    return (lambda: memory[offsets]) if moved else None
