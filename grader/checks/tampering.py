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


def tampering_outcome(tampered: list[str]) -> Outcome | None:
    """The failure every structure check reports, or None when nothing was changed."""
    if not tampered:
        return None
    named = "; ".join(tampered[:SHOWN]) + (f"; and {len(tampered) - SHOWN} more" if len(tampered) > SHOWN else "")
    return Outcome.failed(f"Your code changes the machinery the grader observes JAX with, so nothing it saw of what "
                          f"your function did can be trusted: it {named}. Solve the task with JAX's public API and "
                          "leave JAX's, NumPy's, Python's and the grader's functions and classes as they are "
                          "(jax.config.update is fine)", hint_applies=False)
