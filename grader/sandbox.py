"""Start a submission's child process, talk to it with deadlines, and always clean it up.

The child runs in its own session (so one ``killpg`` ends everything it started), in a
fresh temporary directory, with an environment built from an allowlist, stdin from
/dev/null, resource limits, and its stdout/stderr captured into a bounded buffer.
"""
from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from grader.protocol import HEADER, MAX_MESSAGE_BYTES

PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)
BOOT = f"import sys; sys.path.insert(0, {PACKAGE_PARENT!r}); from grader.child import main; main()"
ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")
# Starts the child another way than exec (grader.pool forks it): gets the exec command line, its
# environment, working directory and (inbox read end, outbox write end, output write end); returns
# an object with the pid/poll/wait/returncode of subprocess.Popen. The child joins a new process group.
Launcher = Callable[[list[str], dict[str, str], str, tuple[int, int, int]], Any]


@dataclass(frozen=True)
class Limits:
    """How long and how big a submission may run. ``call_s`` bounds each request (an
    import, a call, a trace); ``total_s`` the whole grading of one submission."""
    call_s: float = 5.0
    total_s: float = 60.0
    startup_s: float = 60.0
    memory_mib: int = 4096
    output_kib: int = 64


class ChildFailure(Exception):
    """The child stopped answering: it ran out of time, died, or broke the protocol."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "time" | "memory" | "crash" | "protocol"
        self.message = message


class CapturedOutput:
    """Keeps the head and the tail of everything the child prints; counts the rest."""

    def __init__(self, fd: int, keep_bytes: int) -> None:
        self.keep = keep_bytes
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self._thread = threading.Thread(target=self._drain, args=(fd,), daemon=True)
        self._thread.start()

    def _drain(self, fd: int) -> None:
        with os.fdopen(fd, "rb", buffering=0) as stream:
            while chunk := stream.read(1 << 16):
                self.total += len(chunk)
                room = self.keep - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self.tail += chunk
                    del self.tail[:-self.keep]

    def finish(self, timeout: float = 2.0) -> dict[str, Any]:
        self._thread.join(timeout)
        dropped = self.total - len(self.head) - len(self.tail)
        return {"head": self.head.decode("utf-8", "replace"), "tail": self.tail.decode("utf-8", "replace"),
                "dropped_bytes": max(dropped, 0), "total_bytes": self.total}


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class Child:
    """One live child process. Use as a context manager; ``request`` sends one message and
    waits at most ``timeout`` seconds for the answer."""

    def __init__(self, devices: int, limits: Limits, compile_cache: str | None = None,
                 launcher: Launcher | None = None) -> None:
        self.limits = limits
        self.workdir = tempfile.mkdtemp(prefix="jaxgrade-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        output_r, output_w = os.pipe()
        env = {k: os.environ[k] for k in ENV_ALLOWLIST if k in os.environ}
        env.update(HOME=self.workdir, TMPDIR=self.workdir, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1",
                   PYTHONUNBUFFERED="1", JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES=str(devices),
                   JAX_ENABLE_X64="0", TF_CPP_MIN_LOG_LEVEL="2")
        if compile_cache:
            env.update(JAX_COMPILATION_CACHE_DIR=compile_cache, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                       JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1",
                       # without this the key holds the directory's path and a moved cache never hits
                       JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES="none")
        argv = [sys.executable, "-I", "-c", BOOT, str(to_child_r), str(from_child_w)]
        if launcher is not None:  # e.g. grader.pool: fork it, ready-imported, from a warm process
            self.process = launcher(argv, env, self.workdir, (to_child_r, from_child_w, output_w))
        else:
            self.process = subprocess.Popen(
                argv, pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=output_w,
                stderr=output_w, cwd=self.workdir, env=env, start_new_session=True)
        for fd in (to_child_r, from_child_w, output_w):
            os.close(fd)
        self._limit_resources()
        self.output = CapturedOutput(output_r, limits.output_kib << 10)
        self._buffer = b""
        self._ready: dict[str, Any] | None = None

    @property
    def ready(self) -> dict[str, Any]:
        """The child's greeting (JAX version, devices); waits for it the first time. Starting
        the process and waiting for it are apart so the parent can work while JAX imports."""
        if self._ready is None:
            self._ready = self._receive(time.monotonic() + self.limits.startup_s, "while starting JAX")
            if self._ready.get("op") != "ready":
                raise ChildFailure("protocol", f"the grading process could not start: {self._ready.get('error')}")
        return self._ready

    def _limit_resources(self) -> None:
        memory = self.limits.memory_mib << 20
        for name, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CORE, 0)):
            try:
                resource.prlimit(self.process.pid, name, (value, value))
            except (ProcessLookupError, PermissionError, ValueError):
                pass

    def request(self, message: dict[str, Any], timeout: float, during: str) -> dict[str, Any]:
        self.ready
        try:
            body = json.dumps(message).encode("utf-8")
            os.write(self._to_child, HEADER.pack(len(body)) + body)
        except (BrokenPipeError, OSError):
            raise self._death(during) from None
        return self._receive(time.monotonic() + timeout, during)

    def _receive(self, deadline: float, during: str) -> dict[str, Any]:
        while True:
            if len(self._buffer) >= HEADER.size:
                (length,) = HEADER.unpack(self._buffer[:HEADER.size])
                if length > MAX_MESSAGE_BYTES:
                    raise ChildFailure("protocol", f"the grading process sent an oversized message {during}")
                if len(self._buffer) >= HEADER.size + length:
                    body = self._buffer[HEADER.size:HEADER.size + length]
                    self._buffer = self._buffer[HEADER.size + length:]
                    try:
                        message = json.loads(body)
                    except ValueError:
                        raise ChildFailure("protocol", f"the grading process sent unreadable data {during}") from None
                    if not isinstance(message, dict):
                        raise ChildFailure("protocol", f"the grading process sent unreadable data {during}")
                    return message
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise ChildFailure("time", f"no answer within the time limit {during}")
            readable, _, _ = select.select([self._from_child], [], [], remaining)
            if readable:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise self._death(during)
                self._buffer += chunk

    def _death(self, during: str) -> ChildFailure:
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
            return ChildFailure("protocol", f"the process closed its channel {during}")
        if code < 0:
            name = _signal_name(-code)
            if -code == signal.SIGKILL:
                return ChildFailure("memory", f"the process was killed ({name}, most likely out of memory) {during}")
            return ChildFailure("crash", f"the process crashed ({name}) {during}")
        return ChildFailure("crash", f"the process exited with code {code} {during}")

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self) -> dict[str, Any]:
        """End the child and everything it started; return its captured output."""
        if self.process.poll() is None:
            try:
                os.write(self._to_child, HEADER.pack(14) + b'{"op": "exit"}')
                self.process.wait(timeout=1)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        self.process.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        output = self.output.finish()
        shutil.rmtree(self.workdir, ignore_errors=True)
        return output

    def __enter__(self) -> "Child":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
