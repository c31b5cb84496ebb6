"""What a jitted call's donation gave up, read from its executable and the call (runs in the
child, for the jit and ahead-of-time routes; issue #65).

A donated operand's buffer is given up only where XLA's compiled program writes an output
into it (an input-output alias of the executable) and the operand reached the program as it
was given. One whose sharding or layout differs from the program's is copied onto them
first, and the copy is what is given up: the array the call was given is kept.

Nothing here touches a donated array after the call: its sharding and layout are read
before it (``Donations.before``), the executable's aliases, shardings and layouts after
(``Donations.after``). Asking a donated array whether it was deleted, or reading its shards,
is what JAX 0.10 cannot always survive (a cross-device donation), and it would be a probe of
the buffer, not a fact of the program that ran.
"""
from __future__ import annotations

import re
from typing import Any

# An alias in the HLO module's header: ``{output index}: (parameter, {index}, may-alias)``
_ALIAS = re.compile(r"\((\d+), \{[^}]*\}, (?:may|must)-alias\)")
_UNREAD = object()  # an operand whose placement could not be read: never as given

Before = dict[int, tuple[Any, Any, int]]  # operand position -> (its sharding, layout, rank), read before the call


class Donations:
    """The executables' aliases, read once each (the module's text is printed for it), for
    every call the routes see."""

    def __init__(self, array_class: type) -> None:
        self.array_class = array_class
        self.aliases: dict[int, tuple[Any, frozenset[int]]] = {}  # id(executable) -> (it, aliased parameters)

    def before(self, operands: Any, donated: Any, constants: int = 0) -> Before:
        """The sharding and layout of every donated ``jax.Array`` operand (positions counted
        in ``operands``, whose first ``constants`` are the program's constants, never donated)."""
        placed: Before = {}
        for i, flag in enumerate(donated):
            position = constants + i
            if not flag or position >= len(operands) or type(operands[position]) is not self.array_class:
                continue
            operand = operands[position]
            try:
                placed[position] = (operand.sharding, operand.format.layout, operand.ndim)
            except Exception:  # already deleted, or no layout to read: JAX copies or refuses it
                placed[position] = (_UNREAD, _UNREAD, 0)
        return placed

    def after(self, executable: Any, placed: Before, shift: int = 0) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(reused, copied)``: the donated operands (positions as in ``before``) whose own
        buffers the program wrote an output into, and those JAX copied onto the program's
        placement first, the copy's buffer being the one written into. Operand ``i`` is the
        program's parameter ``i + shift`` (the jit route's operands leave out the program's
        constants). Both empty where the executable says nothing readable: nothing given up
        is claimed."""
        if not placed or executable is None:
            return (), ()
        aliased = self._aliased(executable)
        try:
            kept = {position: n for n, position in enumerate(sorted(executable._kept_var_idx))}
            shardings, layouts = executable._in_shardings, executable._dispatch_in_layouts
        except Exception:  # an executable of another kind
            return (), ()
        reused: list[int] = []
        copied: list[int] = []
        for position, (sharding, layout, rank) in sorted(placed.items()):
            n = kept.get(position + shift)
            if n is None or n not in aliased or n >= len(shardings):
                continue
            wanted, wanted_layout = shardings[n], layouts[n] if n < len(layouts) else None
            (reused if _as_given(sharding, layout, rank, wanted, wanted_layout) else copied).append(position)
        return tuple(reused), tuple(copied)

    def _aliased(self, executable: Any) -> frozenset[int]:
        """The program's parameters (counted among those JAX kept) that an output is written
        into, from the compiled HLO module's header."""
        known = self.aliases.get(id(executable))
        if known is None:
            try:
                header = executable.xla_extension_executable().hlo_modules()[0].to_string().split("\n", 1)[0]
                found = frozenset(int(n) for n in _ALIAS.findall(header))
            except Exception:  # no compiled module to read: nothing aliased is known
                found = frozenset()
            known = self.aliases[id(executable)] = (executable, found)  # kept alive: the id stays its own
        return known[1]


def _as_given(sharding: Any, layout: Any, rank: int, wanted: Any, wanted_layout: Any) -> bool:
    """Whether JAX hands an operand placed so to a program wanting ``wanted`` without a copy:
    the same devices, tiling and memory (``Sharding.is_equivalent_to``), and the layout the
    program asks for, where it asks for one."""
    if sharding is _UNREAD:
        return False
    try:
        same = sharding.is_equivalent_to(wanted, rank)
    except Exception:
        return False
    return bool(same) and (wanted_layout is None or layout == wanted_layout)

