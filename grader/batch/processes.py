"""A class run's grading processes: each submission graded, judged and rendered off the grader's own process.

Judging a submission is Python work in the grading process (reading the child's replies,
judging each check, rendering the reports): ~60 ms of CPU per submission. Graded by threads
of one process, that work is serial under the interpreter lock, and on a machine of many
cores it caps a class run near 4x one worker (issue #57: 2.0 s of a warm run's 10.3 s of CPU
were the grader's own). So ``jaxgrade grade -j N`` grades in N processes instead, forked from
the grader once the run is prepared (the exercise loaded, its inputs drawn, the compilation
cache filled): they start with all of that, in copy-on-write pages.

They are grader processes, not sandboxed children: a student's code still runs only in the
child each grading forks, as before, from the one warm zygote the grader started
(:mod:`grader.sandbox.pool`). Each grading process gets a channel of its own to that zygote
(``Pool.attach``), so N processes share one import of JAX. Should the zygote die, what is left
is not graded (the next run grades it), as Ctrl-C ends a run at once: the grader closes the
zygote, which kills every child. What comes back to the grader is a student's rendered files and record
(:class:`grader.batch.results.Graded`), which it writes and adds to the gradebook.
"""
from __future__ import annotations

import ctypes
import gc
import multiprocessing
import multiprocessing.util
import os
import signal
import socket
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Any, Callable

from grader.batch.results import Graded
from grader.batch.submissions import Submission
from grader.errors import PoolError
from grader.sandbox.settling import settle

if TYPE_CHECKING:
    from grader.sandbox.pool import Pool
    from grader.sandbox.process import Launcher

# What grades one submission (with its result's key) in a grading process, made there from its launcher.
Work = Callable[[Submission, dict[str, Any]], Graded]
_work: Work | None = None  # in a grading process: set once, by _begin
PR_SET_PDEATHSIG = 1


class GradingProcesses:
    """``jobs`` grading processes forked now from this one, forking their children through
    ``pool``'s zygote for the child environment ``env``; ``make_work(launcher)`` gives each its
    :data:`Work`."""

    def __init__(self, jobs: int, pool: Pool, env: dict[str, str], make_work: Callable[[Launcher], Work]) -> None:
        settle()  # nothing of the preparation's children is given back while the processes fork
        channels: list[socket.socket | None] = []
        for _ in range(jobs):
            try:
                channels.append(pool.attach(env))
            except (OSError, PoolError):  # its zygote could not start: each process tries one of its own
                channels.append(None)
        context = multiprocessing.get_context("fork")  # what they start with is this process's state
        slots = context.SimpleQueue()
        for index in range(jobs):
            slots.put(index)
        self._executor = ProcessPoolExecutor(jobs, mp_context=context, initializer=_begin,
                                             initargs=(os.getpid(), slots, channels, pool, env, make_work))
        # Forked now, while this process is as prepared (a ProcessPoolExecutor forks them all at
        # its first task). What it holds is frozen for the fork: a grading process's collections
        # neither walk it nor write to its pages (each write copies a page; under gVisor a
        # costly fault), as in the zygote's children.
        gc.freeze()
        try:
            self._executor.submit(int).result()
        finally:
            gc.unfreeze()
        for channel in channels:  # each process holds its own; this one needs none
            if channel is not None:
                channel.close()

    def submit(self, submission: Submission, key: dict[str, Any]) -> Future[Graded]:
        return self._executor.submit(_grade, submission, key)

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)


def _begin(grader: int, slots: Any, channels: list[socket.socket | None], inherited: Pool, env: dict[str, str],
           make_work: Callable[[Launcher], Work]) -> None:
    """In a grading process, once: take a channel (closing the others' and the grader's own
    channels to the zygote, so the zygote still sees the grader go), and make the work."""
    global _work
    from grader.sandbox.pool import Pool
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the grader's to handle: it ends the children
    # A grader killed outright takes its grading processes along (nothing else would end them).
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != grader:
        os._exit(70)
    mine = channels[slots.get()]
    for channel in channels:
        if channel is not None and channel is not mine:
            channel.close()
    inherited.forsake()
    pool = Pool()
    if mine is not None:
        pool.adopt(env, mine)
    _work = make_work(pool.launch)
    # Before it exits: what its children and witnesses left given back (in this process's background).
    multiprocessing.util.Finalize(None, settle, exitpriority=10)


def _grade(submission: Submission, key: dict[str, Any]) -> Graded:
    assert _work is not None, "a grading process grades only after _begin"
    return _work(submission, key)
