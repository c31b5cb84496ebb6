"""What every structure check says of a submission that changed JAX, NumPy, the standard
library or the grader (``Session.tampered``, named by the child's ``grader.child.watch``).

The structure checks are judged from what the child observed while the submission's code ran
in the same process; a submission that replaced a function or class of that machinery (an
executable's memory statistics, the HLO text, ``re.match``) could have forged any of it, so
each fails, naming the change. The value checks stand: a result is judged in the grader's
own process. Configuration through the public API (``jax.config.update``) writes data, not
functions, and is no change here.
"""
from __future__ import annotations

from grader.outcome import Outcome

SHOWN = 3  # changes named in the message; the rest counted


# The standard-library modules everyday code writes and puts back (warnings.catch_warnings assigns
# warnings.filters and showwarning; logging's configuration its handlers): nothing the grader
# observes JAX with passes through them. Any other module written within a call (functools,
# threading, ... which JAX's dispatch reads) could have hidden what the child saw.
HONEST_PUT_BACK = ("warnings", "logging")
PUT_BACK = " while your code runs, and puts it back"


def forgeable(change: str) -> bool:
    """Whether a change the child named could have forged a fact of the structure checks once
    the witness reproduced the call's account: all but a namespace of ``HONEST_PUT_BACK``'s
    written and put back within the call."""
    if not change.endswith(PUT_BACK):
        return True
    label = change.removeprefix("rewrites ").removesuffix(PUT_BACK)
    return label.partition(".")[0] not in HONEST_PUT_BACK


def divergence_outcome(detail: str) -> Outcome:
    """The failure every structure check reports when the call's account does not reproduce
    what the call returned (``grader.observe.witnessed``)."""
    return Outcome.failed("What your code reported is not what it computed: the programs handed over for your call, "
                          f"run again by the grader, do not give what your function returned ({detail}). Solve the "
                          "task with JAX's public API and leave the grader's machinery alone", hint_applies=False)


def tampering_note(tampered: list[str]) -> str:
    """The note on a passing structure check for changes the witness found harmless."""
    return (f"Your code {_named(tampered)}; the grader re-derived what your function computed and found it as "
            "reported, so this costs nothing.")


def _named(tampered: list[str]) -> str:
    return "; ".join(tampered[:SHOWN]) + (f"; and {len(tampered) - SHOWN} more" if len(tampered) > SHOWN else "")


def tampering_outcome(tampered: list[str]) -> Outcome | None:
    """The failure every structure check reports, or None when nothing was changed."""
    if not tampered:
        return None
    return Outcome.failed(f"Your code changes the machinery the grader observes JAX with, so nothing it saw of what "
                          f"your function did can be trusted: it {_named(tampered)}. Solve the task with JAX's public API and "
                          "leave JAX's, NumPy's, Python's and the grader's functions and classes as they are "
                          "(jax.config.update is fine)", hint_applies=False)
