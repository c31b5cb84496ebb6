"""The parent's side of the witness: one witness process per grading thread and device count
(``shared``), started as a session starts (its JAX import overlaps the child's) and kept for
every later account the thread checks, with a memory limit and a deadline per account (a
handed-over program may loop forever: then it is ended, and the account is unverifiable, never
the grader's failure). An account leaves nothing behind in it that a later one reads but
compiled programs, so sharing it changes no verdict."""
from __future__ import annotations

import atexit
import os
import select
import signal
import subprocess
import sys
import threading
from typing import Any, Callable

from grader.errors import ChannelClosed, Malformed
from grader.importpath import boot
from grader.wire import read_message, write_message
from grader.xla_options import XLA_FLAGS

START_S = 60.0  # importing JAX on a busy machine


MAX_PER_THREAD = 2  # witnesses a thread keeps (one per device count): the least recently used is ended


# How a witness may be started besides exec'ing Python: forked from a warm process that has
# imported JAX and runs no submission (grader.sandbox.pool's zygote), given the witness's command
# line and its (inbox, outbox, output) descriptors; it returns what ``subprocess.Popen`` would
# (poll, wait, pid). Raising says it cannot, and the witness is exec'd instead.
Spawner = Callable[[list[str], tuple[int, int, int]], Any]


class Witness:
    def __init__(self, devices: int, memory_mib: int, compile_cache: str | None = None) -> None:
        self.devices, self.memory_mib, self.compile_cache = devices, memory_mib, compile_cache
        self.spawner: Spawner | None = None  # the latest grading's (grader.observe.session), used at the next start
        self._process: Any = None
        self._inbox = self._outbox = -1  # our ends of its channel: what we write, what we read
        self._fresh = False  # started, and not asked anything yet (its import may still run)

    def _start(self) -> None:
        to_witness, inbox = os.pipe()
        outbox, from_witness = os.pipe()
        # -I and the grader's own folders only: a jax.py or numpy.py in the current folder (a
        # student's, where the student runs jaxgrade check) is never imported here
        code = boot("from grader.witness.__main__ import main; main()")
        argv = [sys.executable, "-I", "-c", code, str(to_witness), str(from_witness), str(self.memory_mib),
                self.compile_cache or ""]
        self._inbox, self._outbox = inbox, outbox  # closed by close(), should neither start
        try:
            self._process = self._forked(argv, (to_witness, from_witness)) or self._execd(argv, (to_witness, from_witness))
        finally:
            os.close(to_witness)
            os.close(from_witness)

    def _forked(self, argv: list[str], fds: tuple[int, int]) -> Any:
        """The witness forked from a warm process (no JAX import of its own), or None."""
        if self.spawner is None:
            return None
        output = os.open(os.devnull, os.O_WRONLY)
        try:
            return self.spawner(argv, (*fds, output))
        except Exception:  # noqa: BLE001 (a closed pool, a zygote gone: exec'ing it still works)
            return None
        finally:
            os.close(output)

    def _execd(self, argv: list[str], fds: tuple[int, int]) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_", "PYTHON"))}
        env.update(JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES=str(self.devices), JAX_ENABLE_X64="0",
                   TF_CPP_MIN_LOG_LEVEL="2", XLA_FLAGS=XLA_FLAGS)
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env, pass_fds=fds, start_new_session=True)

    def warm(self) -> None:
        """Start the process now, if it is not running, so JAX imports while the child works."""
        if self._process is None or self._process.poll() is not None:
            self.close()
            self._start()
            self._fresh = True

    def check(self, account: Any, arguments: list[list[Any]], seconds: float,
              substitute: dict[str, Any] | None = None) -> dict[str, Any]:
        """The witness's answer for one account (``grader.witness.rerun``, ``substitute`` as
        there) within ``seconds`` (and the start's), or an unverifiable one when the witness
        could not answer in time."""
        self.warm()
        deadline = START_S + seconds if self._fresh else seconds
        self._fresh = False
        try:
            write_message(self._inbox, {"op": "witness", "account": account, "arguments": arguments,
                                        "substitute": substitute})
            ready, _, _ = select.select([self._outbox], [], [], deadline)
            if not ready:
                self.close()
                return {"ok": False, "unverifiable": f"the witness took more than {deadline:.0f} s to run the "
                                                     "account's programs again"}
            return read_message(self._outbox)
        except (OSError, ChannelClosed, Malformed) as error:
            self.close()
            return {"ok": False, "unverifiable": f"the witness ended ({type(error).__name__}: {error})"}

    def close(self) -> None:
        process, self._process = self._process, None
        self._close_channel()
        if process is None:
            return
        try:
            process.wait(timeout=5)  # its input closed: it ends by itself
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
            process.wait(timeout=5)

    def _close_channel(self) -> None:
        for fd in (self._inbox, self._outbox):
            if fd >= 0:
                os.close(fd)
        self._inbox = self._outbox = -1


_local = threading.local()


def _forget_after_fork() -> None:
    """In a process forked from the grader (a class run's grading process, grader.batch.processes):
    the forking thread's witnesses serve the grader, and a second writer would garble their
    channel. This process starts its own; only its copies of their pipes are closed."""
    for witness in (getattr(_local, "witnesses", None) or {}).values():
        witness._process = None
        witness._close_channel()
    _local.witnesses = {}


os.register_at_fork(after_in_child=_forget_after_fork)


def close_all() -> None:
    """End this thread's witnesses now (a grading process's last act: its exit skips atexit)."""
    for witness in (getattr(_local, "witnesses", None) or {}).values():
        witness.close()
    _local.witnesses = {}


def shared(devices: int, memory_mib: int, cached: bool, spawner: Spawner | None = None) -> Witness:
    """This thread's witness for ``devices`` simulated devices, made on first use (with the
    grader's own compilation cache when ``cached``) and ended when the grader exits or when the
    thread needs more than ``MAX_PER_THREAD``. ``spawner``: how the grading asking for it would
    fork one (its next start uses it; one running already serves as it is)."""
    from grader.cache import witness_cache_folder
    found: dict[tuple[int, int, bool], Witness] = getattr(_local, "witnesses", None) or {}
    _local.witnesses = found
    key = (devices, memory_mib, cached)
    if key in found:
        found[key] = found.pop(key)  # the most recently used last
    else:
        while len(found) >= MAX_PER_THREAD:
            found.pop(next(iter(found))).close()
        found[key] = Witness(devices, memory_mib, witness_cache_folder() if cached else None)
        atexit.register(found[key].close)
    found[key].spawner = spawner
    return found[key]
