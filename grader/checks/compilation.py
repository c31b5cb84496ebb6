"""``structure``: how the submission's own jitted functions are compiled: how often, and
which argument buffers they donate.

A jitted step that is compiled anew on every call (a static argument whose value changes,
``jax.jit`` applied inside the function, a shape that differs from call to call) returns the
right numbers, only ten to a thousand times slower, so no value check can see it. The
recorder (``grader.child.recorder``) sees every call of a jitted function, served from
JAX's caches or not, counts the programs compiled during it (a program the persistent
compilation cache serves counts too: what the grader's cache holds changes no count), and
says why a function was traced or compiled again (which argument changed, and how).

``CompilesAtMost`` makes its own calls, on the probe's shapes and with new values each time (every
float scalar too: a learning rate that changes between steps), so a correct step is compiled
at most once whatever the other checks called before. Those calls are served by what the first
call on these shapes compiled (the probe call's), so that call is read too: a function compiled
twice within it (a static chunk index in a loop, a helper called at two shapes) would otherwise
be missed.

``Donates`` reads the probe call: a jitted function of the submission's own was given the
argument itself (not a copy) as a donated operand, XLA reused its buffer (the array is
deleted when the call returns), which it does only when an output can take its place, and
that program computed what the function returned (a jitted identity that only consumes w
while the step runs eagerly, or in NumPy, saves nothing).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from grader.arguments import Signature, argument_leaves, with_leaf
from grader.checks.base import Check, Context
from grader.checks.returns import probe_call
from grader.checks.shardings import capital
from grader.observe.returned import JitCall, Recompiled, Returned
from grader.outcome import Category, Outcome


@dataclass(frozen=True, kw_only=True)
class CompilesAtMost(Check):
    """Over ``calls`` calls on the probe's shapes with new values each time, each of the
    submission's own jitted functions is compiled at most ``limit`` times, and at least one
    of them runs (``require_jit``). ``vary``: the leaves given new values on each call
    (``lr``, ``params['w']``); None: every array and every float."""
    limit: int = 1
    calls: int = 4
    vary: tuple[str, ...] | None = None
    require_jit: bool = True
    category: ClassVar[Category] = "structure"
    judged_once: ClassVar[bool] = True  # the same calls under every seed; a warm child has compiled them

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        found = []
        if self.limit < 0 or self.calls < 2:
            found.append(f"{self.id}: needs limit >= 0 and calls >= 2 (got {self.limit}, {self.calls})")
        leaves = {path for path, _ in argument_leaves(probe)}
        found += [f"{self.id}: vary names {path!r}, which is no leaf of the probe (leaves: {', '.join(sorted(leaves))})"
                  for path in self.vary or () if path not in leaves]
        return found

    def judge(self, context: Context) -> Outcome:
        within = self._within_one_call(probe_call(context))
        if within is not None:
            return within
        # own function -> (call number, the jitted call that compiled it, if one did) for each
        # compilation, whatever route asked for it: a jitted call, or .lower().compile()
        compiled: dict[str, list[tuple[int, JitCall | None]]] = {}
        own = False
        for number, arguments in enumerate(_new_values(context.probe, self.calls, self.vary), start=1):
            returned = context.session.call(arguments)
            if not returned.ok:
                return Outcome.failed(f"Call {number} of {self.calls} (the probe's shapes, new values) "
                                      f"{returned.describe()}, so how often it compiles cannot be judged.",
                                      expected=f"{self.calls} calls that return", observed=returned.describe())
            own = own or any(call.own for call in returned.jit_calls)
            compiling = {call.function: call for call in returned.jit_calls if call.own and call.compiles}
            for made in returned.compilations:
                if made.own:
                    compiled.setdefault(made.function, []).extend([(number, compiling.get(made.function))]
                                                                  * made.count)
        if self.require_jit and not own:
            return Outcome.failed(
                f"None of your own jitted functions ran in {self.calls} calls: without jax.jit every call dispatches "
                "each operation on its own.", expected="a jitted function of yours, compiled once",
                observed="no jax.jit function of yours ran")
        worst = max(compiled.items(), key=lambda item: len(item[1]), default=None)
        if worst is None:
            return Outcome.passed(f"Over {self.calls} calls with new values, none of your jitted functions was "
                                  "compiled again: each was already compiled for these shapes.")
        if len(worst[1]) <= self.limit:
            return Outcome.passed(f"Over {self.calls} calls with new values, each of your jitted functions was "
                                  f"compiled at most {_times(len(worst[1]))} (the limit: {_times(self.limit)}).")
        function, compiles = worst
        return Outcome.failed(
            f"{function} was compiled {len(compiles)} times over {self.calls} calls of your function on inputs of "
            f"the same shapes (at most {_times(self.limit)} expected). {_causes(compiles)}Every compilation costs "
            "far more than the step itself.",
            expected=f"each jitted function compiled at most {_times(self.limit)}",
            observed=f"{function} compiled {len(compiles)} times in {self.calls} calls")


    def _within_one_call(self, first: Returned) -> Outcome | None:
        """The failure of a function compiled more than ``limit`` times within the probe call,
        the first on the probe's shapes (None when none was). That call compiles each function
        once, whatever the limit on the calls after it (0: none of them compiles)."""
        most = max(self.limit, 1)
        over = [made for made in (first.compilations if first.ok else ()) if made.own and made.count > most]
        if not over:
            return None
        worst = max(over, key=lambda made: made.count)
        # the first compile in the call is the first on these shapes: the others say why they happened
        causes = {_cause(call.again) for call in [c for c in first.jit_calls
                                                   if c.function == worst.function and c.compiles][1:]
                  if call.again is not None}
        because = "".join(f"It was compiled again because {cause}. " for cause in sorted(causes)[:3])
        observed = f"{worst.function} compiled {worst.count} times in one call"
        return Outcome.failed(
            f"{worst.function} was compiled {worst.count} times within one call of your function (the probe call, the "
            f"first on these shapes; at most {_times(most)} expected). {because}Every compilation costs far "
            "more than the step itself, and every call on new shapes pays them all.",
            expected=f"each jitted function compiled at most {_times(most)} in a call", observed=observed)


@dataclass(frozen=True, kw_only=True)
class Donates(Check):
    """In the probe call, a jitted function of the submission's own donates ``argument`` (a
    parameter or a leaf of one, as given, not a copy) and, with ``reused``, XLA reused its
    buffer for an output. With ``placed``, a copy of it placed on a sharding counts as it: a
    sharded step donates what it placed (``jax.device_put`` first), or the copy JAX places on
    the jit's ``in_shardings`` when handed an unplaced array (the array given keeps its buffer:
    an unplaced array cannot be donated where it does not live)."""
    argument: str
    reused: bool = True
    placed: bool = False
    category: ClassVar[Category] = "structure"

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        leaves = [path for path, _ in argument_leaves(probe)]
        if self.argument not in leaves:
            return [f"{self.id}: argument={self.argument!r} is no leaf of the probe (leaves: {', '.join(leaves)})"]
        return []

    def judge(self, context: Context) -> Outcome:
        returned = probe_call(context)
        name = self.argument
        want = f"{name}'s buffer donated to your jitted function" + (" and reused by XLA" if self.reused else "")
        if not returned.ok:
            return Outcome.failed(f"Nothing to judge here: your function {returned.describe()}.", expected=want,
                                  observed=returned.describe())
        own = [call for call in returned.jit_calls if call.own]
        donating = [call for call in own if name in call.donated_leaves]
        reusing = [call for call in donating if not self.reused or name in call.reused_leaves]
        computing = [call for call in reusing if call.computes]
        if computing:
            return Outcome.passed(f"{computing[0].function} donates {name}"
                                  + (" and XLA reused its buffer for the result." if self.reused else "."))
        copied = [call for call in own if name in call.placed_reused]
        if copied and self.placed and any(call.computes for call in copied):
            call = next(call for call in copied if call.computes)
            return Outcome.passed(f"{call.function} donates {name} placed on its sharding ({_placed_by(call, name)}), "
                                  "and XLA reused the placed buffer for the result.")
        if copied and not self.placed:
            call = copied[0]
            observed = (f"what {call.function} donates is a copy of {name} placed on a sharding (by "
                        f"{_placed_by(call, name)}), and it is not the {name} your function was given: XLA reused the "
                        f"copy's buffer, and {name} keeps its own")
            return Outcome.failed(f"{capital(observed)}. Donate {name} itself: pass it to the donating jitted "
                                  "function as your function was given it.", expected=want, observed=observed)
        reusing = reusing or [call for call in copied if call not in reusing]
        if reusing:
            observed = (f"{name} is donated to {reusing[0].function}, but what your function returns is not "
                        "computed by that program")
            return Outcome.failed(f"The {observed}: the buffer is given up where no result is made, and the "
                                  f"step runs elsewhere. Donate {name} to the jitted function that computes the update, "
                                  "and return what it returns.", expected=want, observed=observed)
        if donating:
            observed = f"{name} is donated to {donating[0].function}, but XLA did not reuse its buffer"
            return Outcome.failed(f"{observed}: no output of that program has {name}'s shape and dtype, so the "
                                  f"donation saves nothing. Return the updated {name} from the jitted function.",
                                  expected=want, observed=observed)
        leaves = sorted({n for call in own for n in call.donated_leaves})
        other = next((call for call in own if call.donated), None)
        if leaves:
            observed = f"your jitted functions donate {', '.join(leaves)}, not {name}"
        elif other is not None:
            observed = (f"{other.function} donates its argument {other.donated[0]}, but what it receives there is not "
                        f"the {name} your function was given: a copy of it, or a value computed from it")
        elif own:
            observed = "none of your jitted functions donates anything"
        else:
            observed = "no jitted function of yours ran"
        return Outcome.failed(
            f"{capital(observed)}. Donating {name} (jax.jit(..., donate_argnums=...) or donate_argnames="
            f"{name.split('[')[0]!r}) lets XLA write the result into {name}'s buffer instead of a new one, and the "
            f"{name} passed in must be the one donated.", expected=want, observed=observed)


def _placed_by(call: JitCall, name: str) -> str:
    """Who placed the copy of ``name`` that ``call`` donated: JAX, on the jit's in_shardings,
    when the array given went in as it was; else the submission's ``jax.device_put``."""
    return "JAX, on the jit's in_shardings" if name in call.donated_leaves else "your jax.device_put"


def _times(count: int) -> str:
    return {0: "no time", 1: "once", 2: "twice"}.get(count, f"{count} times")


# Causes that, at a check's first call, only say its inputs differ from an earlier check's calls
# (another shape, sharding or argument count): that compile is the first for these inputs.
FIRST_FOR_THESE_INPUTS = ("type", "sharding", "arguments")


def _causes(compiles: list[tuple[int, JitCall | None]]) -> str:
    """Why the function compiled again, in words: each distinct cause once, with the calls it
    caused (``Call 2 ... (calls 3 and 4: the same.)``)."""
    grouped: dict[tuple[str, str], list[tuple[int, Recompiled]]] = {}
    for number, call in compiles:
        if call is not None and call.again is not None and not (number == 1 and call.again.what in FIRST_FOR_THESE_INPUTS):
            grouped.setdefault((call.again.what, call.again.argument), []).append((number, call.again))
    sentences = []
    for found in list(grouped.values())[:3]:
        (number, again), rest = found[0], [n for n, _ in found[1:]]
        sentences.append(f"Call {number} compiled it again because {_cause(again)}."
                         + (f" ({_calls(rest)}: the same.)" if rest else ""))
    return "".join(s + " " for s in sentences)


def _calls(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"Call {numbers[0]}"
    return f"Calls {', '.join(str(n) for n in numbers[:-1])} and {numbers[-1]}"


def _cause(again: Recompiled) -> str:
    if again.what == "static":
        return (f"the static argument {again.argument} changed from {again.before} to {again.after}: each new value "
                f"of a static argument is a new program, so pass {again.argument} as a traced argument")
    if again.what == "type":
        return f"{again.argument} changed from {again.before} to {again.after}"
    if again.what == "sharding":
        return f"{again.argument}'s sharding changed from {again.before} to {again.after}"
    if again.what == "new_function":
        return ("it is a new function each time (jax.jit applied inside your function to a function defined there, "
                "or to a partial of it): define the function once, outside, and pass what changes as an argument")
    if again.what == "arguments":
        return f"its arguments changed ({again.before or 'none'} before, {again.after or 'none'} now)"
    return "a value it captures (a global or a closure variable) changed"


def _new_values(probe: dict[str, Any], count: int, vary: tuple[str, ...] | None) -> list[dict[str, Any]]:
    """The probe, then ``count - 1`` copies whose varied leaves hold other values of the same
    type and shape: arrays scaled, float scalars (a learning rate) halved each time."""
    inputs = [probe]
    for k in range(1, count):
        arguments = probe
        for path, value in argument_leaves(probe):
            if vary is not None and path not in vary:
                continue
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                arguments = with_leaf(arguments, path, (value * (1.0 + 0.125 * k)).astype(value.dtype))
            elif isinstance(value, np.ndarray) and value.dtype.kind in "iu" and vary is not None:
                arguments = with_leaf(arguments, path, value + k)
            elif type(value) is float:
                arguments = with_leaf(arguments, path, value * 0.5 ** k)
        inputs.append(arguments)
    return inputs
