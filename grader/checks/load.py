"""``load``: the file can be imported and defines the function, callable with the declared arguments
(for a factory, ``make_step()`` runs and returns such a function).

A notebook runs cell by cell (``grader.child.cells``): the cells the function does not need
that failed were skipped, and every outcome lists them (a skipped cell may be why the function
is missing); a needed cell that failed is the failure, named by its number."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from grader.arguments import Signature
from grader.checks.base import Check, Context
from grader.observe.session import Loaded
from grader.outcome import Category, Outcome
from grader.notebook.convert import notebook_note


@dataclass(frozen=True, kw_only=True)
class LoadsFunction(Check):
    """Its title, unless given, names the function as the task calls it: "The file loads and
    defines row_sums(x)", or for a factory "The file loads, and make_step() returns a function
    of (w, lr)" (filled in by ``for_function`` when the exercise loads)."""
    id: str = "load.function"
    title: str = ""
    category: ClassVar[Category] = "load"

    def for_function(self, function: str, signature: Signature) -> Self:
        if self.title:
            return self
        title = (f"The file loads, and {function}() returns a function of ({', '.join(signature.names)})"
                 if signature.factory else f"The file loads and defines {signature.call_text(function)}")
        return dataclasses.replace(self, title=title)

    def judge(self, context: Context) -> Outcome:
        loaded = context.session.load()
        name = context.function
        call = context.signature.call_text(name)
        count = len(context.signature.names)
        arguments = "one argument" if count == 1 else f"{count} arguments"
        skipped = _skipped_cells(loaded.detail)
        if loaded.ok:
            made = f"{name}() returns {loaded.detail.get('signature')}, which" if loaded.detail.get("made_by") else \
                f"{loaded.detail.get('signature', name)} is defined and"
            return Outcome.passed(f"{made} takes {arguments}.", advisory=notebook_note(context.notes, skipped))
        outcome = self._failure(loaded, name, call, arguments)
        if skipped:  # what ran is not all the student wrote: say what was left behind
            outcome = dataclasses.replace(outcome, message=f"{outcome.message}\nSkipped because they failed (your "
                                                           f"function does not need them): {'; '.join(skipped)}.")
        return outcome

    def _failure(self, loaded: Loaded, name: str, call: str, arguments: str) -> Outcome:
        detail = loaded.detail
        if loaded.incident:
            return Outcome.failed(f"Your file could not be imported: {loaded.incident.message}.",
                                  expected="the import finishes quickly and normally",
                                  observed=loaded.incident.message)
        if loaded.stage == "syntax":
            where = f"line {detail.get('line')}" if detail.get("line") else "your file"
            text = f": {detail['text'].strip()}" if detail.get("text") else ""
            return Outcome.failed(f"Python cannot parse your file ({detail.get('error')} at {where}{text}). "
                                  "Fix the syntax, then run the check again.")
        if loaded.stage == "import" and "cell" in detail:
            if detail["needed"]:
                return Outcome.failed(f"Cell {detail['cell']} of your notebook raised an error, and your function "
                                      f"needs that cell (it defines {name} or something {name} uses), so the "
                                      f"function could not be tested:\n{detail.get('error')}\nMake the notebook run "
                                      "from a fresh start (Kernel > Restart & Run All), then check again.")
            return Outcome.failed(f"Cell {detail['cell']} of your notebook raised {detail.get('exception')}, which "
                                  f"stops the whole notebook:\n{detail.get('error')}\nOnly an Exception (or "
                                  "sys.exit) in a cell your function does not need is skipped.")
        if loaded.stage == "import":
            return Outcome.failed("Importing your file raised an error, so the function could not be tested:\n"
                                  f"{detail.get('error')}\nCode at the top level of the file runs on import; "
                                  "keep it to imports and definitions.")
        if loaded.stage == "function":
            defined = detail.get("defined") or []
            found = f" Your file defines: {', '.join(defined)}." if defined else " Your file defines no functions."
            return Outcome.failed(f"Your file does not define a function named {name}.{found} "
                                  f"Rename your function to {name}.", expected=f"def {call}: ...",
                                  observed=", ".join(defined) or "no functions")
        if loaded.stage == "factory":
            return Outcome.failed(f"Calling {name}() raised an error, so there is no function to test:\n"
                                  f"{detail.get('error')}\nThe grader calls {name}() once, with no arguments, and "
                                  "then calls what it returns.", expected=f"{name}() returns a function",
                                  observed=f"{name}() raised {detail.get('exception')}")
        if loaded.stage == "not_callable" and detail.get("made_by"):
            return Outcome.failed(f"{name}() returned a {detail.get('type')}, not a function. The task calls {call}: "
                                  f"define the step inside {name} and return it.",
                                  expected=f"{name}() returns a function", observed=f"a {detail.get('type')}")
        if loaded.stage == "not_callable":
            return Outcome.failed(f"{name} in your file is a {detail.get('type')}, not a function. "
                                  f"Define it with def {call}: ...")
        if loaded.stage == "signature":
            made = f" (returned by {name}())" if detail.get("made_by") else ""
            return Outcome.failed(f"{detail.get('signature')}{made} cannot be called with {arguments}. "
                                  f"The task calls {call}; define {call}.",
                                  expected=call, observed=str(detail.get("signature")))
        if loaded.stage == "read":
            return Outcome.failed(f"Your file could not be read ({detail.get('error')}). Check the path and that "
                                  "the file is a readable Python source file.")
        return Outcome.failed(f"Your file could not be loaded: {detail.get('error', loaded.stage)}.")


def _skipped_cells(detail: dict[str, Any]) -> tuple[str, ...]:
    """The notebook cells skipped because they failed, as the report lists them."""
    listed = [f"cell {s['cell']} skipped: it {s['error']}" if s.get("stopped") else
              f"cell {s['cell']} skipped: {'its line ' + str(s['line']) if s['line'] else 'it'} raised {s['error']}"
              for s in detail.get("skipped", ())]
    more = detail.get("skipped_count", 0) - len(listed)
    return (*listed, f"and {more} more") if more > 0 else tuple(listed)
