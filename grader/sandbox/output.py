"""What a child prints, captured in the grader: the head and the tail of it, and a count of the
rest (a submission that prints gigabytes costs the grader two bounded buffers)."""
from __future__ import annotations

import os
import select
import threading
from typing import Any

_CHUNK = 1 << 16
_AFTER_KILL = 1024  # chunks read at most once the writers are killed (a pipe holds far less)


class CapturedOutput:
    """Keeps the head and the tail of everything the child prints; counts the rest. A thread
    reads the pipe until its end, or, once every process that could write it is killed
    (``finish(killed=True)``), until it is empty: a killed process's pipe ends only when the
    kernel has freed its memory (~20 ms for a JAX process), and nothing is written after the
    kill."""

    def __init__(self, fd: int, keep_bytes: int) -> None:
        self.keep = keep_bytes
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self._wake, self._woken = os.pipe()
        # The wake pipe's read end is closed by whichever of the reader and ``finish`` ends last:
        # a write to a pipe with no reader would be SIGPIPE (the CLI dies of it, as a shell tool should).
        self._ends = threading.Lock()
        self._drained = self._finished = False
        self._thread = threading.Thread(target=self._drain, args=(fd,), daemon=True)
        self._thread.start()

    def _drain(self, fd: int) -> None:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.register(self._wake, select.POLLIN)
        try:
            while True:
                ready = {ready_fd for ready_fd, _ in poller.poll()}
                if fd in ready:  # what is in the pipe is read before a wake is heeded
                    chunk = os.read(fd, _CHUNK)
                    if not chunk:
                        return
                    self._keep(chunk)
                elif self._wake in ready:
                    os.set_blocking(fd, False)
                    for _ in range(_AFTER_KILL):
                        chunk = _read_now(fd)
                        if not chunk:
                            break
                        self._keep(chunk)
                    return
        finally:
            os.close(fd)
            with self._ends:
                self._drained = True
                if self._finished:
                    os.close(self._wake)

    def _keep(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[:-self.keep]

    def finish(self, timeout: float = 2.0, killed: bool = False) -> dict[str, Any]:
        """What was captured; ``killed``: every writer is dead, so stop at an empty pipe."""
        if killed:
            os.write(self._woken, b"!")
        self._thread.join(timeout)
        os.close(self._woken)  # a reader still waiting (past the timeout) takes this as its wake
        with self._ends:
            self._finished = True
            if self._drained:
                os.close(self._wake)
        dropped = self.total - len(self.head) - len(self.tail)
        return {"head": self.head.decode("utf-8", "replace"), "tail": self.tail.decode("utf-8", "replace"),
                "dropped_bytes": max(dropped, 0), "total_bytes": self.total}


def _read_now(fd: int) -> bytes:
    try:
        return os.read(fd, _CHUNK)
    except BlockingIOError:
        return b""
