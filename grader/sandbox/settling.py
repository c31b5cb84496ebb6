"""What a closed child leaves to give back, given back off the grading's path.

Once a child's last answer is read and every process of it is killed, what remains takes time
that no grading needs to wait for: its process reaped (the kernel frees a JAX process's memory
first, ~20 ms), its control group and folder removed, and its sandbox uid swept (IPC objects,
what it owns in the world-writable folders, its keyrings: ~35 ms, a fork of the grader among
them) and given back. One background thread does that work, in order (:func:`later`); a uid
stays leased until its sweep is done, so the next child gets another. :func:`settle` waits for
all of it, and so does the interpreter's exit (its thread is joined then).
"""
from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

log = logging.getLogger("jaxgrade.sandbox")
_EXECUTORS: list[ThreadPoolExecutor] = []  # one thread, made on first use
# A process forked from this one (a class run's grading processes) has no such thread: it makes its own.
os.register_at_fork(after_in_child=_EXECUTORS.clear)


def later(work: Callable[[], object]) -> None:
    """Run ``work`` in the background thread, after everything handed to it before."""
    if not _EXECUTORS:
        _EXECUTORS.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="jaxgrade-settle"))
    _EXECUTORS[0].submit(_logged, work)


def settle() -> None:
    """Wait until everything handed to :func:`later` is done."""
    if _EXECUTORS:
        _EXECUTORS[0].submit(lambda: None).result()  # one thread, in order: every earlier piece is done


def _logged(work: Callable[[], object]) -> None:
    try:
        work()
    except Exception:  # noqa: BLE001 (nobody waits for this thread's result: say it loudly instead)
        log.exception("giving back what a closed child left failed")
