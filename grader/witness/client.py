"""The parent's side of the witness: one witness process per grading session, started on the
first account to check and kept for the session's later ones, with a memory limit and a
deadline per account (a handed-over program may loop forever: then it is ended, and the
account is unverifiable, never the grader's failure)."""
from __future__ import annotations

import os
import resource
import select
import subprocess
import sys
from typing import Any

from grader.errors import ChannelClosed, Malformed
from grader.wire import read_message, write_message

START_S = 60.0  # importing JAX on a busy machine
ACCOUNT_S = 60.0  # running one account's programs again


class Witness:
    def __init__(self, devices: int, memory_mib: int, compile_cache: str | None = None) -> None:
        self.devices, self.memory_mib, self.compile_cache = devices, memory_mib, compile_cache
        self._process: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_"))}
        env.update(JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES=str(self.devices), JAX_ENABLE_X64="0",
                   TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        if self.compile_cache:
            env.update(JAX_COMPILATION_CACHE_DIR=self.compile_cache, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                       JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1", JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES="none")
        limit = self.memory_mib << 20

        def limited() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        return subprocess.Popen([sys.executable, "-m", "grader.witness"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, preexec_fn=limited,
                                start_new_session=True)

    def check(self, account: Any, arguments: list[list[Any]]) -> dict[str, Any]:
        """The witness's answer for one account (``grader.witness.rerun``), or an unverifiable
        one when the witness could not answer in time."""
        if self._process is None or self._process.poll() is not None:
            self.close()
            self._process = self._start()
            deadline = START_S + ACCOUNT_S
        else:
            deadline = ACCOUNT_S
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        try:
            write_message(process.stdin.fileno(), {"op": "witness", "account": account, "arguments": arguments})
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
