"""The parent's side of the witness: one witness process per grading thread and device count
(``shared``), started as a session starts (its JAX import overlaps the child's) and kept for
every later account the thread checks, with a memory limit and a deadline per account (a
handed-over program may loop forever: then it is ended, and the account is unverifiable, never
the grader's failure). An account leaves nothing behind in it that a later one reads but
compiled programs, so sharing it changes no verdict."""
from __future__ import annotations

import atexit
import os
import resource
import select
import subprocess
import sys
import threading
from typing import Any

from grader.errors import ChannelClosed, Malformed
from grader.importpath import boot
from grader.wire import read_message, write_message

START_S = 60.0  # importing JAX on a busy machine


MAX_PER_THREAD = 2  # witnesses a thread keeps (one per device count): the least recently used is ended


class Witness:
    def __init__(self, devices: int, memory_mib: int, compile_cache: str | None = None) -> None:
        self.devices, self.memory_mib, self.compile_cache = devices, memory_mib, compile_cache
        self._process: subprocess.Popen[bytes] | None = None
        self._fresh = False  # started, and not asked anything yet (its import may still run)

    def _start(self) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_", "PYTHON"))}
        env.update(JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES=str(self.devices), JAX_ENABLE_X64="0",
                   TF_CPP_MIN_LOG_LEVEL="2")
        if self.compile_cache:
            env.update(JAX_COMPILATION_CACHE_DIR=self.compile_cache, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                       JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1", JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES="none")
        limit = self.memory_mib << 20

        def limited() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # -I and the grader's own folders only: a jax.py or numpy.py in the current folder (a
        # student's, where the student runs jaxgrade check) is never imported here
        code = boot("from grader.witness.__main__ import main; main()")
        return subprocess.Popen([sys.executable, "-I", "-c", code], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, preexec_fn=limited,
                                start_new_session=True)

    def warm(self) -> None:
        """Start the process now, if it is not running, so JAX imports while the child works."""
        if self._process is None or self._process.poll() is not None:
            self.close()
            self._process = self._start()
            self._fresh = True

    def check(self, account: Any, arguments: list[list[Any]], seconds: float,
              substitute: dict[str, Any] | None = None) -> dict[str, Any]:
        """The witness's answer for one account (``grader.witness.rerun``, ``substitute`` as
        there) within ``seconds`` (and the start's), or an unverifiable one when the witness
        could not answer in time."""
        self.warm()
        deadline = START_S + seconds if self._fresh else seconds
        self._fresh = False
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        try:
            write_message(process.stdin.fileno(), {"op": "witness", "account": account, "arguments": arguments,
                                                   "substitute": substitute})
            ready, _, _ = select.select([process.stdout], [], [], deadline)
            if not ready:
                self.close()
                return {"ok": False, "unverifiable": f"the witness took more than {deadline:.0f} s to run the "
                                                     "account's programs again"}
            return read_message(process.stdout.fileno())
        except (OSError, ChannelClosed, Malformed) as error:
            self.close()
            return {"ok": False, "unverifiable": f"the witness ended ({type(error).__name__}: {error})"}

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


_local = threading.local()


def _forget_after_fork() -> None:
    """In a process forked from the grader (a class run's grading process, grader.batch.processes):
    the forking thread's witnesses serve the grader, and a second writer would garble their
    channel. This process starts its own; only its copies of their pipes are closed."""
    for witness in (getattr(_local, "witnesses", None) or {}).values():
        process, witness._process = witness._process, None
        for stream in (process.stdin, process.stdout) if process is not None else ():
            if stream is not None:
                stream.close()
    _local.witnesses = {}


os.register_at_fork(after_in_child=_forget_after_fork)


def close_all() -> None:
    """End this thread's witnesses now (a grading process's last act: its exit skips atexit)."""
    for witness in (getattr(_local, "witnesses", None) or {}).values():
        witness.close()
    _local.witnesses = {}


def shared(devices: int, memory_mib: int, cached: bool) -> Witness:
    """This thread's witness for ``devices`` simulated devices, made on first use (with the
    grader's own compilation cache when ``cached``) and ended when the grader exits or when the
    thread needs more than ``MAX_PER_THREAD``."""
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
    return found[key]
