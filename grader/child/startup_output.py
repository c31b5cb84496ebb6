"""What a child prints before the submission runs is not the submission's output.

Importing JAX and starting its backend print things of their own on some machines: on a Cloud
TPU VM ``import jax`` warns "Transparent hugepages are not enabled..." (cloud_tpu_init.py),
and every ``jax_plugins`` module JAX finds is imported, and its ``initialize()`` run, when the
backend starts, printing what it likes. Reports then said "Your program printed 366 bytes"
of text the student never printed. So from the start of the child until the submission is
loaded, stdout and stderr (the descriptors, so what C code writes too) go to /dev/null; the
real ones are kept on descriptors of their own and put back just before the submission's
first line runs. A Python exception while starting still reaches the grader, in the child's
"failed" message.
"""
from __future__ import annotations

import os
import sys

_kept: list[int] = []  # the real stdout and stderr while they are silenced


def silence() -> tuple[int, ...]:
    """Send stdout and stderr to /dev/null until :func:`restore`; return the descriptors that
    keep the real ones (the confinement must leave them open)."""
    if not _kept:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        _kept.extend(os.dup(fd) for fd in (1, 2))  # not inherited by what the child starts
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            os.dup2(null, fd)
        os.close(null)
    return tuple(_kept)


def restore() -> None:
    """Put the real stdout and stderr back (once; later calls do nothing)."""
    if _kept:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        for fd, kept in zip((1, 2), _kept):
            os.dup2(kept, fd)
            os.close(kept)
        _kept.clear()
