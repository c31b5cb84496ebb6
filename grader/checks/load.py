"""``load``: the file can be imported and defines the function, callable with the declared arguments."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from grader.checks.base import Check, Context
from grader.outcome import Category, Outcome
from grader.source import notebook_note


@dataclass(frozen=True, kw_only=True)
class LoadsFunction(Check):
    category: ClassVar[Category] = "load"

    def judge(self, context: Context) -> Outcome:
        loaded = context.session.load()
        name = context.function
        call = context.signature.call_text(name)
        count = len(context.signature.names)
        arguments = "one argument" if count == 1 else f"{count} arguments"
        if loaded.ok:
            return Outcome.passed(f"{loaded.detail.get('signature', name)} is defined and takes {arguments}.",
                                  advisory=notebook_note(context.notes))
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
        if loaded.stage == "not_callable":
            return Outcome.failed(f"{name} in your file is a {detail.get('type')}, not a function. "
                                  f"Define it with def {call}: ...")
        if loaded.stage == "signature":
            return Outcome.failed(f"{detail.get('signature')} cannot be called with {arguments}. "
                                  f"The task calls {call}; define {call}.",
                                  expected=call, observed=str(detail.get("signature")))
        if loaded.stage == "read":
            return Outcome.failed(f"Your file could not be read ({detail.get('error')}). Check the path and that "
                                  "the file is a readable Python source file.")
        return Outcome.failed(f"Your file could not be loaded: {detail.get('error', loaded.stage)}.")
