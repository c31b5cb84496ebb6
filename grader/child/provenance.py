"""Which XLA program made the outputs a call returned (runs in the child; issue #64).

A compiled executable's way of running (its ``_unsafe_call``, its ``xla_executable``) is an
attribute the submission can set: a call of the program lowered with the asked-for shardings
can run another program, or run both and hand back the other's outputs, and a record that
named the program called would name the first. So the routes name a call's program by what
made the outputs it returned:

- ``UnloadedMeshExecutable.load`` (where JAX makes every executable it compiled or read from a
  cache): each executable with the XLA executable it was made with, as it was then, before the
  submission could hold it;
- ``LoadedExecutable.execute_sharded``, while a call is watched (``Provenance.watch``): its
  results are handed back in a wrapper that notes, for every array JAX makes of them, the XLA
  executable that made it.

``Provenance.producer`` then says which one XLA executable made all of a call's outputs
(``NOTHING`` where the call made none: it returned its inputs, or nothing), or None where they
were not all made by one program run during the call (made on the host, copied, or by several).
"""
from __future__ import annotations

import weakref
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

NOTHING = object()  # a call whose outputs no program made: nothing to name


class Provenance:
    """Entries last as long as their executable: the XLA executable each was made with is held
    while it lives (so its id is never another's), and let go with it, as JAX would."""

    def __init__(self) -> None:
        # id(executable) -> (a weak reference to it, its XLA executable as made)
        self.made: dict[int, tuple[weakref.ref, Any]] = {}
        self.executables: dict[int, list[weakref.ref]] = {}  # id(XLA executable) -> the executables made with it
        self._outputs: dict[int, tuple[Any, Any]] = {}  # id(array) -> (it, the XLA executable that made it)
        self._watching = [0]

    def install(self, pxla: Any) -> list[tuple[Any, str, Any]]:
        """Put the hooks in place; returns them as (owner, attribute, hook) for ``intact``."""
        load, execute = pxla.UnloadedMeshExecutable.load, pxla.xc.LoadedExecutable.execute_sharded
        made, executables, outputs, watching = self.made, self.executables, self._outputs, self._watching

        def observed_load(unloaded: Any) -> Any:
            executable = load(unloaded)
            loaded = getattr(executable, "xla_executable", None)
            reference = weakref.ref(executable)
            made[id(executable)] = (reference, loaded)
            if loaded is not None:
                executables.setdefault(id(loaded), []).append(reference)
            weakref.finalize(executable, _forget, made, executables, id(executable), id(loaded), reference)
            return executable

        def observed_execute(loaded: Any, *args: Any, **kwargs: Any) -> Any:
            results = execute(loaded, *args, **kwargs)
            return _Results(results, loaded, outputs) if watching[0] else results

        pxla.UnloadedMeshExecutable.load = observed_load
        pxla.xc.LoadedExecutable.execute_sharded = observed_execute
        return [(pxla.UnloadedMeshExecutable, "load", observed_load),
                (pxla.xc.LoadedExecutable, "execute_sharded", observed_execute)]

    def loaded(self, executable: Any) -> Any:
        """The XLA executable ``executable`` was made with (None: not one JAX made here)."""
        known = self.made.get(id(executable))
        return known[1] if known is not None and known[0]() is executable else None

    def made_with(self, loaded: Any) -> list[Any]:
        """The executables alive that JAX made with XLA executable ``loaded``."""
        found = [reference() for reference in self.executables.get(id(loaded), [])]
        return [executable for executable in found if executable is not None and self.loaded(executable) is loaded]

    @contextmanager
    def watch(self) -> Iterator[None]:
        """Note what every program run inside makes, until the outermost watch ends."""
        self._watching[0] += 1
        try:
            yield
        finally:
            self._watching[0] -= 1
            if not self._watching[0]:
                self._outputs.clear()

    def producer(self, outputs: Iterable[Any], inputs: Iterable[Any] = ()) -> Any:
        """Inside a watch: the one XLA executable that made every output (those passed through
        from ``inputs`` aside), ``NOTHING`` where none was made, or None where they were not
        all made by one program run during the watch."""
        passed = {id(x) for x in inputs}
        found: dict[int, Any] = {}
        for output in outputs:
            if id(output) in passed:
                continue
            entry = self._outputs.get(id(output))
            if entry is None or entry[0] is not output:
                return None
            found[id(entry[1])] = entry[1]
        if not found:
            return NOTHING
        return next(iter(found.values())) if len(found) == 1 else None


def _forget(made: dict[int, Any], executables: dict[int, list[Any]], executable: int, loaded: int,
            reference: weakref.ref) -> None:
    """An executable gone: its entries go with it (unless its id was taken again meanwhile)."""
    if executable in made and made[executable][0] is reference:
        del made[executable]
    others = [r for r in executables.get(loaded, []) if r is not reference]
    if others:
        executables[loaded] = others
    else:
        executables.pop(loaded, None)


class _Results:
    """XLA's results of one execution, as JAX reads them, noting what it makes of them."""

    __slots__ = ("_results", "_loaded", "_outputs")

    def __init__(self, results: Any, loaded: Any, outputs: dict[int, tuple[Any, Any]]) -> None:
        self._results, self._loaded, self._outputs = results, loaded, outputs

    def consume_with_handlers(self, *args: Any, **kwargs: Any) -> Any:
        made = self._results.consume_with_handlers(*args, **kwargs)
        for value in made:
            self._outputs[id(value)] = (value, self._loaded)
        return made

    def __getattr__(self, name: str) -> Any:
        return getattr(self._results, name)
