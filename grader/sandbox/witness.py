"""The parent's side of the witness (``grader.witness``): one witness process per grading,
started, confined, limited and cleaned up exactly as the submission's child is
(``ChildProcess``, with the witness's ``Role``): where the grader is root, a uid of its own
(``WITNESS_UIDS``: never a child's, never the grader's), the child's namespaces (no network,
nothing writable but its scratch, the exercises and the class hidden), its limits on memory,
CPU time, processes and files; without root, the same fallbacks the child gets.

A witness checks the accounts of one grading and is ended with it: nothing one student's
accounts make it compile or hold reaches another's. Its compilation cache is filled only by
witnesses of the instructor's code (the reference and the variants, graded unconfined) and is
read-only to every other (or not given to it, where nothing would keep it from writing there),
so a program compiled for one account is read back for another only as that same program,
written by XLA for trusted code.

Its silence is never a verdict: a witness that cannot start, crashes, is killed or passes its
budget answers ``unverifiable``, saying what happened, and every check resting on it fails
(``grader.checks.compiled_program.unwitnessed``). Its time is its own: each account gets a
budget from the call's own time, capped (``account_budget``); once one runs past it, no later
account of the grading is run; and one grading's accounts have a total (``TOTAL_S``): a hostile
account costs a class run one capped budget.
"""
from __future__ import annotations

import grp
import os
import time
from typing import Any

from grader.cache import witness_cache_folder
from grader.child import landlock
from grader.errors import ChildFailure, SandboxError
from grader.sandbox.limits import Limits
from grader.sandbox.process import ChildProcess, Launcher, Role
from grader.sandbox.uids import WITNESS_UIDS

ENTRY = "from grader.witness.__main__ import main; main()"
# The group every witness runs as where the grader is root: what lets a witness, whatever uid it
# was leased, read the witness cache (root's, mode 0750 to this group), and no child read it.
WITNESS_GID = 63000
# A witness re-running an account: a floor for compiling its programs, then a share of the
# call's own time, capped; all the accounts of one grading together at most TOTAL_S.
FLOOR_S = 3.0
FACTOR = 2.0
CAP_S = 6.0
TOTAL_S = 60.0


def account_budget(call_s: float) -> float:
    """The seconds a witness has to re-run the account of a call that took ``call_s``."""
    return min(CAP_S, FLOOR_S + FACTOR * max(0.0, call_s))


def _silence(failure: ChildFailure, seconds: float) -> str:
    """What a witness that gave no answer did, in words that say what to change."""
    if failure.kind == "time":
        return (f"the programs your call handed over did not finish when run again, within {seconds:.1f} s (a few "
                "times your call's own time): a loop in them ran far longer on the grader's values than in your "
                "call")
    return f"the process that runs them again ended without an answer: {failure.message}"


def _shared_group() -> int | None:
    """``WITNESS_GID``, unless a group of that number exists on the machine (never join one)."""
    try:
        grp.getgrgid(WITNESS_GID)
        return None
    except KeyError:
        return WITNESS_GID


def witness_role(confined: bool, cached: bool) -> Role:
    """How a witness is started: confined (a student's accounts), reading its cache only where no
    sandboxed process can write there (as root, a uid of its own that the cache's mode lets read,
    and every child another uid; else Landlock, which leaves the witness and every child nothing
    writable but their scratch: a read-only mount in the witness's own namespace would not keep
    a child, running as the grader's user, from writing the cache for the next student); or (the
    instructor's code) unconfined, writing its cache. The witness checks again, once confined
    (``grader.witness.__main__``). ``cached``: the grading has a compilation cache at all."""
    root = os.geteuid() == 0
    gid = _shared_group() if root else None
    if not confined:
        return Role(ENTRY, WITNESS_UIDS, arguments=((witness_cache_folder(gid) if cached else None) or "",))
    unwritable = gid is not None if root else landlock.version() >= 1
    cache = witness_cache_folder(gid) if cached and unwritable else None
    return Role(ENTRY, WITNESS_UIDS, gid, (cache or "",), (cache,) if cache else ())


class Witness:
    """One grading's witness: started on first use (or ``warm``), restarted after it fails,
    ended by ``close``."""

    def __init__(self, devices: int, limits: Limits, compile_cache: str | None, hide: tuple[str, ...],
                 launcher: Launcher | None) -> None:
        self.devices, self.limits, self.compile_cache = devices, limits, compile_cache
        self.hide, self.launcher = hide, launcher
        # with the witness's own cache where the grading has the children's
        self.role = witness_role(limits.confine, compile_cache is not None)
        self.spent = 0.0  # seconds its accounts took, this grading
        self.overran: str | None = None  # why an account ran past its budget, once one has
        self._process: ChildProcess | None = None

    def warm(self) -> None:
        """Start the process now, if none runs, so it starts while the child works."""
        if self._process is None:
            # the children's cache is named for the environment alone: a witness forks from their zygote
            self._process = ChildProcess(self.devices, self.limits, self.compile_cache, self.hide, self.launcher,
                                         self.role)

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.process.pid

    def check(self, account: Any, arguments: list[list[Any]], seconds: float,
              substitute: dict[str, Any] | None = None) -> dict[str, Any]:
        """The witness's answer for one account (``grader.witness.rerun``, ``substitute`` as
        there) within ``seconds`` (its start not counted) and what is left of ``TOTAL_S``, or an
        unverifiable one saying why it gave none."""
        if self.overran is not None:  # accounts that do not finish cost one budget, not one each
            return {"ok": False, "unverifiable": f"{self.overran} (an earlier call's; the grader runs no more)"}
        left = TOTAL_S - self.spent
        if left <= 0:
            return {"ok": False, "unverifiable": f"the programs your calls handed over took the {TOTAL_S:g} s the "
                                                 "grader gives to running them again, for the whole grading"}
        seconds = min(seconds, left)
        asked = None
        try:
            self.warm()  # a restart, after a failure, from the thread asking (see Session._witness_later)
            assert self._process is not None
            self._process.ready
            asked = time.monotonic()
            return self._process.request({"op": "witness", "account": account, "arguments": arguments,
                                          "substitute": substitute}, seconds,
                                         "while the grader ran your call's programs again")
        except ChildFailure as failure:
            self.close()
            if asked is None:
                return {"ok": False, "unverifiable": f"the process that runs them again could not start "
                                                     f"({failure.message})"}
            if failure.kind == "time":
                self.overran = _silence(failure, seconds)
            return {"ok": False, "unverifiable": _silence(failure, seconds)}
        except SandboxError as error:
            self.close()
            return {"ok": False, "unverifiable": f"the process that runs them again could not start ({error})"}
        finally:
            if asked is not None:
                self.spent += time.monotonic() - asked

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.close(settle=False)  # what it leaves is given back in the background
