"""Every error that crosses a module boundary, in one place, so lower layers never import
upper ones to raise or catch. Each message says what to do instead.

Standard library only: the sandboxed child imports this module too.
"""
from __future__ import annotations


class UsageError(Exception):
    """Something the user typed cannot work; the message says what to do instead (exit 2)."""


class ExerciseError(Exception):
    """An exercise folder is missing a part or declares something inconsistent."""


class SandboxError(RuntimeError):
    """The sandbox itself could not be set up (no free uid, a confinement step failed): the
    grader's or the machine's problem, reported as an error, never held against a student."""


class ChannelClosed(Exception):
    """The other end of the grading channel went away (the child died or closed its pipe)."""


class ChildFailure(Exception):
    """The child stopped answering: it ran out of time, died, or broke the protocol."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "time" | "memory" | "disk" | "crash" | "protocol" | "sandbox"
        self.message = message


class Malformed(ValueError):
    """A reply from the child that is not what the protocol says (a forged channel): the
    submission's doing, never the grader's."""


class ConfinementError(Exception):
    """A protection the policy requires could not be put in place: the child must not go on."""


class PoolError(OSError):
    """The warm process could not start or fork; grading cannot continue through it."""


class IntakeError(Exception):
    """The input as a whole cannot be read; the message says what to give instead."""


class GraderFailure(Exception):
    """The grader could not finish a submission for a reason of its own (its warm process
    could not fork): no verdict is recorded, so the next run grades it again."""


class ClusterError(Exception):
    """The cluster cannot grade this batch (unreachable, no workers, dask not installed); the
    message says what to do."""


class WorkerMismatch(RuntimeError):
    """A worker runs another jaxgrade or JAX than the machine that asked: its verdicts could
    differ, and results are keyed by the grader's version, so it must not grade."""


class NotebookError(ValueError):
    """A file named .ipynb that is not a notebook nbformat can read."""


class ExportError(Exception):
    """The exercise cannot be exported as asked; the message says what to change."""
