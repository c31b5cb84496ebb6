"""Start a submission's child process, talk to it with deadlines, and always clean it up.

Parent side of the sandbox (the child confines itself with ``grader.sandbox.confine``): the child
runs in its own session, in a fresh temporary directory removed afterwards, with an
environment built from an allowlist, stdin from /dev/null, and stdout/stderr captured into
a bounded buffer (head and tail kept, the rest counted). Every request has a wall-clock
deadline enforced with SIGKILL. As root each child gets a dedicated unprivileged uid,
leased from a range with a lock file; on close every process of that uid is killed, so
nothing the submission started (double-forked, ``setsid``) survives it. Without root the
process group and every process carrying the child's environment marker are killed.
"""
from __future__ import annotations

import fcntl
import itertools
import json
import os
import pwd
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

from grader.errors import ChildFailure, SandboxError
from grader.sandbox.confine import Policy
from grader.sandbox.protocol import HEADER, MAX_MESSAGE_BYTES

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # the folder holding grader/
BOOT = f"import sys; sys.path.insert(0, {PACKAGE_PARENT!r}); from grader.observe.child import main; main()"
ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")
# Starts the child another way than exec (grader.sandbox.pool forks it): gets the exec command line, its
# environment, working directory and (inbox read end, outbox write end, output write end); returns
# an object with the pid/poll/wait/returncode of subprocess.Popen. The child joins a new process group.
Launcher = Callable[[list[str], dict[str, str], str, tuple[int, int, int]], Any]
MARKER = "JAXGRADE_SANDBOX"  # in every child's environment: <grader pid>-<child number>
SANDBOX_UIDS = range(61000, 62000)  # dedicated uids, one per live child, when the grader is root
_numbers = itertools.count(1)


@dataclass(frozen=True)
class Limits:
    """How long and how big a submission may run. ``call_s`` bounds each request (an
    import, a call, a trace); ``check_s`` the requests of one check together (at least: the
    engine raises it for checks the reference solution itself needs long for); ``total_s``
    the whole grading of one submission."""
    call_s: float = 5.0
    check_s: float = 30.0
    total_s: float = 60.0
    startup_s: float = 60.0
    memory_mib: int = 4096
    output_kib: int = 64
    file_mib: int = 64
    # False runs the foundation's plain child (no uid drop, namespaces or in-child limits):
    # only for measuring what the hardened sandbox costs (bench/sandbox_overhead.py).
    confine: bool = True

    @property
    def cpu_s(self) -> int:
        """CPU seconds for the child's whole life: a backstop behind the wall-clock limits
        (XLA may run on every core, so it is not the wall-clock limit itself)."""
        return int(self.startup_s + 2 * self.total_s) + 1




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


def _status_fields(pid: str) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return dict(line.split(":", 1) for line in handle if ":" in line)
    except OSError:  # gone already, or not ours to read
        return {}


def processes_of_uid(uid: int) -> list[int]:
    """Live processes (zombies excluded) whose real, effective or saved uid is ``uid``."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            fields = _status_fields(pid)
            ids = fields.get("Uid", "").split()[:3]
            if str(uid) in ids and not fields.get("State", "").strip().startswith(("Z", "X")):
                found.append(int(pid))
    return found


def marked_processes(marker: str) -> list[int]:
    """Live processes whose environment holds ``JAXGRADE_SANDBOX=<marker>`` (a prefix ending
    in "-" finds all of one grader's children). A process can scrub its environment, so as
    root the uid is what cleanup relies on; this is the fallback, and how tests look."""
    needle = f"{MARKER}={marker}".encode()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                variables = handle.read().split(b"\0")
        except OSError:
            continue
        if any(v.startswith(needle) for v in variables) and \
                not _status_fields(pid).get("State", "").strip().startswith(("Z", "X")):
            found.append(int(pid))
    return found


def kill_uid(uid: int, patience_s: float = 5.0) -> bool:
    """SIGKILL every process of ``uid``; True once none is left. ``kill(-1, SIGKILL)`` from a
    process of that uid reaches all of them in one call (a fork cannot slip between scans);
    the parent then checks /proc, and repeats while any remain."""
    deadline = time.monotonic() + patience_s
    while processes_of_uid(uid):
        pid = os.fork()
        if pid == 0:  # only async-signal-safe system calls until _exit
            try:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def kill_marked(marker: str, patience_s: float = 5.0) -> bool:
    """SIGKILL every process carrying ``marker``; True once none is left."""
    deadline = time.monotonic() + patience_s
    while pids := marked_processes(marker):
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


CLEAN, IN_USE = b"0", b"1"


def _named(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


class UidLease:
    """One dedicated uid (and gid of the same number) for one live child. The lease is an
    flock on a file in a root-only directory: it dies with the grader, so a crashed grader
    leaks no uid, and concurrent graders on one machine never share one."""

    def __init__(self) -> None:
        directory = Path(tempfile.gettempdir()) / "jaxgrade-uids"
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            pass
        info = directory.lstat()
        if not directory.is_dir() or directory.is_symlink() or info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise SandboxError(f"{directory} is not a private directory of the grader's user; "
                               "remove it and grade again")
        for uid in SANDBOX_UIDS:  # lowest first: the same few uids (and lock files) serve again and again
            if _named(uid):
                continue  # a real account: never share it, never kill its processes
            fd = os.open(directory / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            # "0": the last lessee saw the uid empty when it gave it back. Anything else (a new
            # file, a grader that crashed while holding it) may have leftovers: kill them first.
            if os.pread(fd, 1, 0) == CLEAN or kill_uid(uid):
                os.pwrite(fd, IN_USE, 0)
                self.uid, self._fd = uid, fd
                return
            os.close(fd)
        raise SandboxError(f"no free sandbox uid in {SANDBOX_UIDS.start}-{SANDBOX_UIDS.stop - 1}: "
                           "too many children at once, or leftovers that cannot be killed")

    def release(self) -> bool:
        """Kill what still runs under the uid, then give the uid back; False if something
        could not be killed (the uid then stays locked until this grader exits)."""
        if self._fd < 0:
            return True
        if not kill_uid(self.uid):
            return False
        os.pwrite(self._fd, CLEAN, 0)
        os.close(self._fd)
        self._fd = -1
        return True


def child_environment(devices: int, workdir: str, marker: str, compile_cache: str | None = None) -> dict[str, str]:
    """The child's whole environment: an allowlist of the grader's variables, then ours.
    The grader's own variables (tokens, credentials) never reach a submission."""
    env = {k: os.environ[k] for k in ENV_ALLOWLIST if k in os.environ}
    env.update(HOME=workdir, TMPDIR=workdir, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1",
               PYTHONUNBUFFERED="1", JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES=str(devices),
               JAX_ENABLE_X64="0", TF_CPP_MIN_LOG_LEVEL="2",
               # one thread until confine() ran: namespaces are per-thread (OpenBLAS starts a pool)
               OPENBLAS_NUM_THREADS="1", **{MARKER: marker})
    if compile_cache:
        env.update(JAX_COMPILATION_CACHE_DIR=compile_cache, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                   JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1",
                   # without this the key holds the directory's path and a moved cache never hits
                   JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES="none")
    return env


def hidden_paths(paths: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Of ``paths`` (the exercises with their references and checks, the folders submissions
    came from), those a child can be kept from seeing: every existing folder, unless hiding
    it would hide the grader or Python itself."""
    needed = [PACKAGE_PARENT + os.sep + "grader", sys.prefix, sys.base_prefix, tempfile.gettempdir()]
    hidden = []
    for path in paths:
        real = os.path.realpath(path)
        if os.path.isdir(real) and not any(os.path.realpath(n).startswith(real + os.sep) or os.path.realpath(n) == real
                                           for n in needed):
            hidden.append(real)
    return tuple(dict.fromkeys(hidden))


def parent_protections(limits: Limits, lease: UidLease | None) -> dict[str, dict[str, Any]]:
    """The protections the parent itself enforces, in the report's words."""
    cleanup = ("every process of the child's dedicated uid is killed when grading ends" if lease else
               "the process group and every process carrying its environment marker are killed when grading "
               "ends (a process that leaves its session and scrubs its environment would escape)")
    return {
        "time": {"active": True, "detail": f"{limits.call_s:g} s per request, {limits.total_s:g} s in all, "
                                           "then SIGKILL of the whole process group"},
        "environment": {"active": True, "detail": "built from an allowlist: " + ", ".join(ENV_ALLOWLIST)},
        "output": {"active": True, "detail": f"stdout and stderr captured, {limits.output_kib} KiB of head and "
                                             "of tail kept, never parsed"},
        "workdir": {"active": True, "detail": "a fresh temporary directory, removed afterwards"},
        "cleanup": {"active": True, "detail": cleanup},
    }


class Child:
    """One live child process. Use as a context manager; ``request`` sends one message and
    waits at most ``timeout`` seconds for the answer. ``hide``: folders the child must not
    see (the submission's own folder, which holds other students' files in batch grading)."""

    def __init__(self, devices: int, limits: Limits, compile_cache: str | None = None,
                 hide: tuple[str, ...] = (), launcher: Launcher | None = None) -> None:
        self.limits = limits
        self.marker = f"{os.getpid()}-{next(_numbers)}"
        self.lease = UidLease() if limits.confine and os.geteuid() == 0 else None
        self.workdir = tempfile.mkdtemp(prefix="jaxgrade-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        output_r, output_w = os.pipe()
        env = child_environment(devices, self.workdir, self.marker, compile_cache)
        if not limits.confine:  # exactly the foundation's child, for a fair overhead figure
            del env["OPENBLAS_NUM_THREADS"]
        arguments = [sys.executable, "-I", "-c", BOOT, str(to_child_r), str(from_child_w)]
        if limits.confine:
            policy = Policy(workdir=self.workdir, keep_fds=(to_child_r, from_child_w),
                            uid=self.lease.uid if self.lease else None, gid=self.lease.uid if self.lease else None,
                            cpu_s=limits.cpu_s, memory_mib=limits.memory_mib, file_mib=limits.file_mib,
                            hide=hidden_paths(hide), reach=(PACKAGE_PARENT, *([compile_cache] if compile_cache else [])),
                            read_only=(compile_cache,) if compile_cache else ())
            arguments.append(policy.to_json())
        self.protections = parent_protections(limits, self.lease)
        if launcher is not None:  # grader.sandbox.pool: forked, ready-imported, from a warm process
            self.process = launcher(arguments, env, self.workdir, (to_child_r, from_child_w, output_w))
        else:
            self.process = subprocess.Popen(
                arguments, pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=output_w,
                stderr=output_w, cwd=self.workdir, env=env, start_new_session=True)
        for fd in (to_child_r, from_child_w, output_w):
            os.close(fd)
        if not limits.confine:
            self._limit_resources()
            self.protections["confinement"] = {"active": False, "detail": "plain child: no uid drop, namespaces "
                                                                          "or in-child limits"}
        os.set_blocking(self._to_child, False)
        self.output = CapturedOutput(output_r, limits.output_kib << 10)
        self._buffer = b""
        self._ready: dict[str, Any] | None = None
        self._closed: dict[str, Any] | None = None

    @property
    def ready(self) -> dict[str, Any]:
        """The child's greeting (JAX version, devices, protections in force); waits for it the
        first time. Starting the process and waiting for it are apart so the parent can work
        while JAX imports."""
        if self._ready is None:
            self._ready = self._receive(time.monotonic() + self.limits.startup_s, "while starting JAX")
            if self._ready.get("op") != "ready":
                raise ChildFailure("sandbox", f"the grading process could not start: {self._ready.get('error')}")
            reported = self._ready.get("protections")
            if isinstance(reported, dict):
                self.protections.update({str(k): v for k, v in reported.items() if isinstance(v, dict)})
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
        deadline = time.monotonic() + timeout
        body = json.dumps(message).encode("utf-8")
        self._send(HEADER.pack(len(body)) + body, deadline, during)
        return self._receive(deadline, during)

    def _send(self, data: bytes, deadline: float, during: str) -> None:
        """Write without ever blocking past the deadline (a child that stops reading fills the pipe)."""
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise ChildFailure("time", f"no answer within the time limit {during}")
            select.select([], [self._to_child], [], remaining)
            try:
                view = view[os.write(self._to_child, view):]
            except BlockingIOError:
                continue
            except OSError:
                raise self._death(during) from None

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
                    except (ValueError, RecursionError):  # RecursionError: "[[[[..." from a forger
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
            if -code == signal.SIGXCPU:
                return ChildFailure("time", f"the process used up its {self.limits.cpu_s} s of CPU time {during}")
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
        if self._closed is not None:
            return self._closed
        if self.process.poll() is None:
            try:
                os.write(self._to_child, HEADER.pack(14) + b'{"op": "exit"}')
                self.process.wait(timeout=1)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        if self.lease is not None:
            self.lease.release()
        else:
            kill_marked(self.marker)
        self.process.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self._closed = self.output.finish()
        shutil.rmtree(self.workdir, ignore_errors=True)
        return self._closed

    def __enter__(self) -> "Child":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
