"""Every error that crosses a module boundary, in one place, so lower layers never import
upper ones to raise or catch. Each message says what to do instead.

One root, :class:`JaxgradeError`, and three kinds apart, each carrying the exit status a command
ends with when one decides it (:class:`ExitCode`): a :class:`UserFault` is what the person running
jaxgrade gave (a flag, a file, an exercise folder, a download); a :class:`GraderFault` is the
grader's or the machine's environment failing, never held against a student; a
:class:`SubmissionFault` is what the submission's process did, which becomes a verdict in its
report and never reaches a command. Where a fault is also a ``ValueError`` or ``RuntimeError``
it stays one, for the code that catches it as such.

Standard library only: the sandboxed child imports this module too.
"""
from __future__ import annotations

from enum import IntEnum
from typing import ClassVar, Literal


class ExitCode(IntEnum):
    """What a jaxgrade command's exit status means (the README's "For students")."""
    OK = 0              # check: full marks; the other commands: everything done
    NOT_ALL = 1         # check: graded without full marks; grade: the grader failed on some
                        # submissions (grade again); validate: an exercise is not valid
    USAGE = 2           # a usage error, said in one line on stderr
    UNGRADABLE = 3      # the submission could not be graded at all; the report says why
    CRASH = 4           # jaxgrade itself crashed: a bug, never a grade
    INTERRUPTED = 130   # Ctrl-C (128 + SIGINT)
    BROKEN_PIPE = 141   # the reader of stdout went away, as for a program killed by SIGPIPE


class JaxgradeError(Exception):
    """The root of jaxgrade's own errors."""
    exit_code: ClassVar[ExitCode] = ExitCode.CRASH


class UserFault(JaxgradeError):
    """What the person running jaxgrade gave cannot work; the message says what to give instead."""
    exit_code = ExitCode.USAGE


class GraderFault(JaxgradeError):
    """The grader's or the machine's environment failed: no verdict on the submission."""
    exit_code = ExitCode.UNGRADABLE


class SubmissionFault(JaxgradeError):
    """The submission's process failed or misbehaved: judged in its report, never a command's end."""
    exit_code = ExitCode.NOT_ALL


# -- user faults ------------------------------------------------------------------------------

class UsageError(UserFault):
    """Something the user typed cannot work; the message says what to do instead (exit 2)."""


class CheckCellError(UsageError):
    """``grader.check()`` in a notebook cannot grade what the kernel holds; IPython shows it as
    its one line, without a traceback (``_render_traceback_``: IPython's hook)."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class ExerciseError(UserFault):
    """An exercise folder is missing a part or declares something inconsistent."""


class IntakeError(UserFault):
    """The input as a whole cannot be read; the message says what to give instead."""


class NotebookError(UserFault, ValueError):
    """A file named .ipynb that is not a notebook nbformat can read."""


class ExportError(UserFault):
    """The exercise cannot be exported as asked; the message says what to change."""


class ClusterError(UserFault):
    """The cluster cannot grade this batch (unreachable, no workers, dask not installed); the
    message says what to do."""


# -- grader faults ----------------------------------------------------------------------------

class SandboxError(GraderFault, RuntimeError):
    """The sandbox itself could not be set up (no free uid, a confinement step failed): the
    grader's or the machine's problem, reported as an error, never held against a student."""


class ConfinementError(GraderFault):
    """A protection the policy requires could not be put in place: the child must not go on."""


class PoolError(GraderFault):
    """The warm process could not start or fork; grading cannot continue through it."""


class ZygoteGone(PoolError):
    """The warm process was gone before it could receive a request (so it forked nothing)."""


class WarmServiceError(GraderFault):
    """The warm grading service (grader.warm) could not answer a check: never shown, the check
    is graded in-process instead."""


class MissingDependency(GraderFault):
    """A package jaxgrade needs is missing or fails to import here: an install to fix, not a bug."""


class RunnerFilesChanged(GraderFault):
    """The CI runner's file commands ($GITHUB_OUTPUT...) changed while a submission was graded:
    jaxgrade refuses to write after content it did not leave (grader.runner_files)."""


class GraderFailure(GraderFault):
    """The grader could not finish a submission for a reason of its own (its warm process
    could not fork): no verdict is recorded, so the next run grades it again."""


class WorkerMismatch(GraderFault, RuntimeError):
    """A worker runs another jaxgrade or JAX than the machine that asked: its verdicts could
    differ, and results are keyed by the grader's version, so it must not grade."""


# -- submission faults ------------------------------------------------------------------------

class ChannelClosed(SubmissionFault):
    """The other end of the grading channel went away (the child died or closed its pipe)."""


class CellFailed(SubmissionFault):
    """In the child, a notebook cell whose failure fails the load (``grader.child.server``):
    its number, whether the graded function needs it, and ``error`` as the cell raised it."""

    def __init__(self, cell: int, needed: bool, error: BaseException) -> None:
        super().__init__(cell)
        self.cell, self.needed, self.error = cell, needed, error


class CellTimeout(BaseException):
    """In the child, raised by the timer in a notebook cell the graded function does not need
    that ran out of its time (``grader.child.server``): a BaseException, so that a cell's own
    ``except Exception`` does not swallow it."""


# Why a child stopped answering; "sandbox" is the one that is the grader's, not the student's.
ChildFailureKind = Literal["time", "memory", "disk", "crash", "protocol", "sandbox"]


class ChildFailure(SubmissionFault):
    """The child stopped answering: it ran out of time, died, or broke the protocol."""

    def __init__(self, kind: ChildFailureKind, message: str) -> None:
        super().__init__(message)
        self.kind: ChildFailureKind = kind
        self.message = message


class Malformed(SubmissionFault, ValueError):
    """A reply from the child that is not what the protocol says (a forged channel): the
    submission's doing, never the grader's."""


class Unverifiable(GraderFault):
    """In the witness, an account it cannot run (a sharding or step of a kind it does not know,
    a program that does not compile there): no verdict either way, never an accusation."""
