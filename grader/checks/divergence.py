"""What every structure check says of a call whose account the witness ran and found not to be
what the call reported (``grader.observe.witnessed``, ``grader.observe.confirmed``).

The structure checks judge from what the child recorded while the submission's code ran in the
same process; the witness re-runs the programs the call handed over, in a process of its own,
and confirms the returned value, the placements and the returned layouts. A record that
disagrees with that run (the value, a placement, a layout) could have been written by the
submission, so every structure check fails with the disagreement named. The value checks
stand: a result is judged in the grader's own process.
"""
from __future__ import annotations

from grader.outcome import Outcome


def divergence_outcome(detail: str) -> Outcome:
    """The failure every structure check reports when the call's account does not reproduce
    what the call returned, or its record names placements or layouts the account's programs
    do not make."""
    return Outcome.failed("What your code reported is not what it computed: the programs handed over for your call, "
                          f"run again by the grader, do not agree with what your call reported ({detail}). Solve the "
                          "task with JAX's public API and leave the grader's machinery alone", hint_applies=False)
