"""One target, several correct routes: ``AnyOf`` passes when any of its alternatives passes.

A gather can be a shard_map's ``all_gather``, a sharding constraint or a ``device_put``; a
loop JAX understands can be a ``scan`` or a ``while`` (``jax.lax.fori_loop`` with traced
bounds, ``jax.lax.while_loop``). Each route is an ordinary check of the library, declared as
usual; ``AnyOf`` composes them into one check with its own id, title, points and hint:

    AnyOf(UsesPrimitive(id="structure.loop.scan", title="a jax.lax.scan", operation="scan"),
          UsesPrimitive(id="structure.loop.while", title="a jax.lax.while_loop", operation="while"),
          id="structure.loop", title="The recurrence is one loop JAX sees",
          description="run the recurrence as one loop JAX sees")

A route's ``title`` names it in messages; its id is only its own (it earns no points and needs
none in ``[points]``). When every route fails, the message names each route with what it
needed and what it observed, not only the first failure.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Self

from grader.arguments import Signature
from grader.checks.base import Check, Context
from grader.outcome import Category, Outcome

# What the structure checks keep in the session's cache about what has been said once per report
# (grader.checks.structure: "structure explained", "structure noted"). A route that is not taken
# must not leave its words there: a later check would point to a check the report does not show.
_SAID_ONCE = ("structure explained", "structure noted")


@dataclass(frozen=True, kw_only=True, init=False)
class AnyOf(Check):
    """Passes when any of ``alternatives`` passes (the first that does, in order, gives the
    message); when none does, fails with what each route needed and what it observed. An
    alternative that errs (a grader or exercise error) makes the check an error only when no
    other route passes. The routes share one category, which is this check's."""
    alternatives: tuple[Check, ...] = ()
    description: str = ""

    def __init__(self, *alternatives: Check, id: str, title: str, description: str = "", hint: str | None = None,
                 **given: Any) -> None:
        routes = tuple(alternatives) + tuple(given.pop("alternatives", ()))
        if given:
            raise TypeError(f"AnyOf() got unexpected keyword arguments: {', '.join(sorted(given))}")
        if not routes or not all(isinstance(r, Check) for r in routes):
            raise TypeError("AnyOf() takes its routes as checks: AnyOf(check1, check2, ..., id=, title=)")
        for name, value in (("id", id), ("title", title), ("hint", hint), ("alternatives", routes),
                            ("description", description or title[:1].lower() + title[1:])):
            object.__setattr__(self, name, value)

    @property  # type: ignore[override]
    def category(self) -> Category:
        return self.alternatives[0].category

    @property  # type: ignore[override]
    def judged_once(self) -> bool:
        return all(r.judged_once for r in self.alternatives)

    def problems(self, signature: Signature, probe: dict[str, Any]) -> list[str]:
        found = []
        kinds = {r.category for r in self.alternatives}
        if len(kinds) > 1:
            found.append(f"{self.id}: its routes must share a category; they are {', '.join(sorted(kinds))}")
        if kinds & {"load", "limits"}:
            found.append(f"{self.id}: a load or limits check cannot be a route (the engine reads those itself)")
        if len(self.alternatives) < 2:
            found.append(f"{self.id}: AnyOf needs at least two routes")
        if len({r.judged_once for r in self.alternatives}) > 1:
            found.append(f"{self.id}: routes judged once per child (CompilesAtMost, Donates) cannot be mixed with "
                         "others: the check would keep, under later seeds, a verdict only some routes allow")
        titles = [r.title for r in self.alternatives]
        if len(set(titles)) < len(titles):
            found.append(f"{self.id}: each route needs a title of its own (it names the route in messages)")
        return found + [p for r in self.alternatives for p in r.problems(signature, probe)]

    def prepare(self, seed: int, signature: Signature) -> None:
        for route in self.alternatives:
            route.prepare(seed, signature)

    def for_function(self, function: str, signature: Signature) -> Self:
        routes = tuple(r.for_function(function, signature) for r in self.alternatives)
        return type(self)(*routes, id=self.id, title=self.title, description=self.description, hint=self.hint)

    def judge(self, context: Context) -> Outcome:
        cache = context.session.cache
        judged: list[tuple[Check, Outcome]] = []
        for route in self.alternatives:
            before = {key: _copy(cache[key]) for key in _SAID_ONCE if key in cache}
            outcome = route.judge(context)
            noted = bool(cache.get("structure noted")) and not before.get("structure noted")
            for key in _SAID_ONCE:  # what a route said once is the route's, not the report's
                cache.pop(key, None)
                if key in before:
                    cache[key] = before[key]
            if outcome.status == "passed":
                if noted and outcome.advisory:  # the note on how the function was observed went out here
                    cache["structure noted"] = True
                return dataclasses.replace(outcome, message=f"{_capital(route.title)} (one of the "
                                                            f"{len(self.alternatives)} accepted routes to "
                                                            f"{self.description}): {outcome.message}")
            judged.append((route, outcome))
        errors = [(r, o) for r, o in judged if o.status == "error"]
        if errors:
            route, outcome = errors[0]
            return dataclasses.replace(outcome, message=f"{_capital(route.title)}, one of the routes to "
                                                        f"{self.description}: {outcome.message}")
        return _none_taken(self.description, judged)


def _none_taken(description: str, judged: list[tuple[Check, Outcome]]) -> Outcome:
    """Every route failed: each with what it needed and what it observed."""
    if len({o.message for _, o in judged}) == 1:  # one reason for all (the call raised): said once
        return judged[0][1]
    routes = " ".join(f"({i}) {_capital(r.title)}: {o.message.rstrip()}" for i, (r, o) in enumerate(judged, 1))
    expected = " or ".join(f"{r.title} ({o.expected})" if o.expected else r.title for r, o in judged)
    observed = "; ".join(f"{r.title}: {o.observed or o.message.rstrip('.')}" for r, o in judged)
    first = next((o for _, o in judged if o.counterexample or o.reproduce), None)
    return Outcome("failed", f"None of the {len(judged)} accepted routes to {description} is taken. {routes}",
                   max(o.fraction for _, o in judged), expected=expected, observed=observed,
                   counterexample=first.counterexample if first else None,
                   reproduce=first.reproduce if first else None,
                   hint_applies=any(o.hint_applies for _, o in judged))


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]

