"""Start a submission's child process, talk to it with deadlines, and always clean it up.

Parent side of the sandbox (the child confines itself with ``grader.sandbox.confine``): the child
runs in its own session, in a fresh folder of the grader's temporary directory (it works in
its ``scratch`` folder: a bounded tmpfs where it has a mount namespace, else a folder the
grader measures while it runs), with an environment built from an allowlist, stdin from
/dev/null, and stdout/stderr captured into a bounded buffer (head and tail kept, the rest
counted). Every request has a wall-clock deadline enforced with SIGKILL. As root each child
gets a dedicated unprivileged uid, leased machine-wide with a lock file; on close every
process of that uid is killed, so nothing the submission started (double-forked, ``setsid``)
survives it. Without root the process group and every process carrying the child's
environment marker are killed. Then its folder is removed, whatever it holds
(``grader.sandbox.scratch``); what cannot be is reported.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import itertools
import json
import logging
import os
import pwd
import re
import resource
import select
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from grader.errors import ChildFailure, SandboxError
from grader.sandbox.cgroup import ChildGroup
from grader.sandbox.confine import Policy, process_limit
from grader.sandbox.protocol import HEADER, MAX_MESSAGE_BYTES
from grader.sandbox.scratch import ScratchWatch, remove_tree

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # the folder holding grader/
GRADER_PACKAGE = str(Path(__file__).resolve().parents[1])  # grader/ itself: the child imports it
BOOT = f"import sys; sys.path.insert(0, {PACKAGE_PARENT!r}); from grader.observe.child import main; main()"
ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")
# Starts the child another way than exec (grader.sandbox.pool forks it): gets the exec command line, its
# environment, working directory and (inbox read end, outbox write end, output write end); returns
# an object with the pid/poll/wait/returncode of subprocess.Popen. The child joins a new process group.
Launcher = Callable[[list[str], dict[str, str], str, tuple[int, int, int]], Any]
# XLA options for every child. Graded programs are tiny and run a handful of times, so
# compiling is most of their cost: without LLVM's optimisations and with XLA's older CPU
# emitters an operation compiles 2-3x faster (about 36 -> 16 ms each here), and a mistake
# compiles its operations once per input shape. Every child (the reference filling the
# cache included) gets the same options, which are part of the compilation cache's key.
XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"
MARKER = "JAXGRADE_SANDBOX"  # in every child's environment: <grader pid>-<child number>
SANDBOX_UIDS = range(61000, 62000)  # dedicated uids, one per live child, when the grader is root
# Where uid leases live: fixed, root-only and the same for every grader on the machine whatever its
# $TMPDIR (the first whose parent exists). /run is emptied at boot, as leases should be.
LEASE_DIRECTORIES = ("/run/jaxgrade", "/var/lib/jaxgrade")
SCRATCH = "scratch"  # the child's working folder (cwd, HOME, TMPDIR), inside the folder holding its copy
log = logging.getLogger("jaxgrade.sandbox")
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
    # Everything the child may write, all places together (its working folder, /tmp, /var/tmp,
    # /dev/shm): a tmpfs of this size where it has a mount namespace, else a watched folder.
    scratch_mib: int = 256
    scratch_files: int = 16384
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


_STATE = re.compile(r"^State:\s*(\S)", re.M)
_UIDS = re.compile(r"^Uid:\s*(\d+)\s+(\d+)\s+(\d+)", re.M)


def _status(pid: str) -> tuple[str, tuple[int, ...]]:
    """A process's state letter and its real, effective and saved uids ("" and () once it is
    gone or not ours to read). Two fields of ~55: found, not parsed into a dict (a scan of
    /proc follows every child's end)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            text = handle.read()
    except OSError:
        return "", ()
    state, uids = _STATE.search(text), _UIDS.search(text)
    return (state.group(1) if state else ""), (tuple(int(u) for u in uids.groups()) if uids else ())


def _alive(state: str) -> bool:
    return state not in ("Z", "X")  # a zombie, or dead: nothing left to kill


def processes_of_uid(uid: int) -> list[int]:
    """Live processes (zombies excluded) whose real, effective or saved uid is ``uid``."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            state, uids = _status(pid)
            if uid in uids and _alive(state):
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
        if any(v.startswith(needle) for v in variables) and _alive(_status(pid)[0]):
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


# /proc/sysvipc tables: (file, column of the owner's uid, column of the creator's uid).
SYSV_TABLES = (("shm", 7, 9), ("sem", 4, 6), ("msg", 7, 9))
IPC_RMID = 0


def remove_ipc_objects(uid: int) -> list[str]:
    """Remove every System V shared memory segment, semaphore set and message queue that ``uid``
    owns or created, and its POSIX message queues where /dev/mqueue is mounted, in the grader's
    IPC namespace: what a child without an IPC namespace of its own leaves there (a child with
    one takes its objects with it). Returns what could not be removed."""
    libc = ctypes.CDLL(None, use_errno=True)
    remove = {"shm": lambda i: libc.shmctl(i, IPC_RMID, None), "sem": lambda i: libc.semctl(i, 0, IPC_RMID),
              "msg": lambda i: libc.msgctl(i, IPC_RMID, None)}
    failed = []
    for kind, owner, creator in SYSV_TABLES:
        try:
            with open(f"/proc/sysvipc/{kind}") as table:
                rows = [row.split() for row in table.read().splitlines()[1:]]
        except OSError:
            continue
        for row in rows:
            if len(row) > creator and uid in (int(row[owner]), int(row[creator])) and remove[kind](int(row[1])) != 0:
                failed.append(f"System V {kind} {row[1]}: {os.strerror(ctypes.get_errno())}")
    if os.path.ismount("/dev/mqueue"):
        with os.scandir("/dev/mqueue") as queues:
            for queue in queues:
                try:
                    if queue.stat(follow_symlinks=False).st_uid == uid:
                        os.unlink(queue.path)
                except OSError as error:
                    failed.append(f"POSIX message queue {queue.name}: {error.strerror}")
    return failed


def sweep_uid(uid: int) -> bool:
    """Kill every process of ``uid``, then remove its IPC objects; True if nothing is left."""
    if not kill_uid(uid):
        return False
    leaks = remove_ipc_objects(uid)
    if leaks:
        log.error("could not remove what sandbox uid %d left: %s", uid, "; ".join(leaks))
    return not leaks


CLEAN, IN_USE = b"0", b"1"


def _named(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def _private_directory(directory: Path, create: bool) -> bool:
    """Whether ``directory`` is a real directory of the grader's user that no one else may use
    (created 0700 if ``create``); raises SandboxError if it exists but is not."""
    if create:
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            pass
    try:
        info = directory.lstat()
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise SandboxError(f"{directory} is not a private directory of the grader's user; remove it and grade again")
    return True


def lease_directory() -> Path:
    """The machine-wide directory of uid leases (see LEASE_DIRECTORIES), created if need be."""
    for candidate in map(Path, LEASE_DIRECTORIES):
        if candidate.parent.is_dir():
            try:
                if _private_directory(candidate, create=True):
                    return candidate
            except PermissionError:  # a read-only /run: try the next
                continue
    raise SandboxError(f"none of {', '.join(LEASE_DIRECTORIES)} can hold the sandbox's uid leases: "
                       "create one, owned by root with mode 0700")


def _legacy_lease_directories() -> list[Path]:
    """Where graders before leases were machine-wide kept them (under their own temp dir): still
    honoured, so an older grader running on the same machine never shares a uid with this one."""
    found = []
    for base in dict.fromkeys((tempfile.gettempdir(), "/tmp")):
        directory = Path(base) / "jaxgrade-uids"
        try:
            if _private_directory(directory, create=False):
                found.append(directory)
        except SandboxError:
            continue  # not one of ours
    return found


def _try_lock(directory: Path, uid: int) -> int | None:
    """The lock file of ``uid`` in ``directory``, locked; None if another grader holds it."""
    fd = os.open(directory / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


class UidLease:
    """One dedicated uid (and gid of the same number) for one live child. The lease is an
    flock on a file in a root-only directory that is the same for every grader on the machine:
    it dies with the grader, so a crashed grader leaks no uid, and concurrent graders (whatever
    their $TMPDIR) never share one."""

    def __init__(self) -> None:
        directory, legacy = lease_directory(), _legacy_lease_directories()
        for uid in SANDBOX_UIDS:  # lowest first: the same few uids (and lock files) serve again and again
            if _named(uid):
                continue  # a real account: never share it, never kill its processes
            fd = _try_lock(directory, uid)
            if fd is None:
                continue
            others = [_try_lock(old, uid) for old in legacy]
            # "0": the last lessee saw the uid empty when it gave it back. Anything else (a new
            # file, a grader that crashed while holding it) may have leftovers: kill them first.
            if None not in others and (os.pread(fd, 1, 0) == CLEAN or sweep_uid(uid)):
                os.pwrite(fd, IN_USE, 0)
                self.uid, self._fd, self._legacy = uid, fd, [o for o in others if o is not None]
                return
            for held in (fd, *[o for o in others if o is not None]):
                os.close(held)
        raise SandboxError(f"no free sandbox uid in {SANDBOX_UIDS.start}-{SANDBOX_UIDS.stop - 1}: "
                           "too many children at once, or leftovers that cannot be killed")

    def release(self) -> bool:
        """Kill what still runs under the uid and remove its IPC objects, then give the uid back;
        False if something could not be (the uid then stays locked until this grader exits)."""
        if self._fd < 0:
            return True
        if not sweep_uid(self.uid):
            return False
        for fd in (self._fd, *self._legacy):
            os.pwrite(fd, CLEAN, 0)
            os.close(fd)
        self._fd, self._legacy = -1, []
        return True


def child_environment(devices: int, workdir: str, marker: str, compile_cache: str | None = None) -> dict[str, str]:
    """The child's whole environment: an allowlist of the grader's variables, then ours.
    The grader's own variables (tokens, credentials) never reach a submission."""
    env = {k: os.environ[k] for k in ENV_ALLOWLIST if k in os.environ}
    env.update(HOME=workdir, TMPDIR=workdir, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1",
               PYTHONUNBUFFERED="1", JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES=str(devices),
               JAX_ENABLE_X64="0", TF_CPP_MIN_LOG_LEVEL="2", XLA_FLAGS=XLA_FLAGS,
               # one thread until confine() ran: namespaces are per-thread (OpenBLAS starts a pool)
               OPENBLAS_NUM_THREADS="1", **{MARKER: marker})
    if compile_cache:
        env.update(JAX_COMPILATION_CACHE_DIR=compile_cache, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                   JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1",
                   # without this the key holds the directory's path and a moved cache never hits
                   JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES="none",
                   # Source file names (and so paths) removed from every program's metadata: the
                   # cache a confined child reads is filled by the reference and the variants, whose
                   # file names would be in it. Locations are no part of the cache's keys.
                   JAX_HLO_SOURCE_FILE_CANONICALIZATION_REGEX=".*")
    return env


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _git_directories(dot_git: str) -> list[str]:
    """For a ``.git`` file (a worktree or submodule checkout), the git directory it names and
    that directory's common one (which holds every object and branch of the repository)."""
    try:
        with open(dot_git) as handle:
            line = handle.read(4096).strip()
    except (OSError, UnicodeDecodeError):
        return []
    if not line.startswith("gitdir:"):
        return []
    gitdir = os.path.realpath(os.path.join(os.path.dirname(dot_git), line[len("gitdir:"):].strip()))
    found = [gitdir]
    try:
        with open(os.path.join(gitdir, "commondir")) as handle:
            found.append(os.path.realpath(os.path.join(gitdir, handle.read(4096).strip())))
    except (OSError, UnicodeDecodeError):
        pass
    return found


@functools.lru_cache(maxsize=1)
def _checkout() -> tuple[str, tuple[str, ...]] | None:
    """The grader's own source checkout (the real folder holding grader/) and the git
    directories its ``.git`` file names, if any; None when the grader is installed (the folder
    holding grader/ is then site-packages, which the child needs) or is not a checkout (no
    ``.git`` or pyproject.toml there)."""
    parent = os.path.realpath(PACKAGE_PARENT)
    if any(_inside(parent, prefix) for prefix in _python_installation()):
        return None
    dot_git = os.path.join(parent, ".git")
    if not os.path.lexists(dot_git) and not os.path.exists(os.path.join(parent, "pyproject.toml")):
        return None
    named = _git_directories(dot_git) if os.path.isfile(dot_git) and not os.path.islink(dot_git) else []
    return parent, tuple(named)


@functools.lru_cache(maxsize=1)
def _python_installation() -> tuple[str, ...]:
    return tuple(dict.fromkeys(os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                             sys.base_exec_prefix)))


def checkout_entries() -> tuple[str, ...]:
    """Every folder and file of the grader's own checkout but ``grader/`` (its exercises, tests,
    ``.git`` with every version of every reference), and the git directories a ``.git`` file
    points to; empty when the grader is not run from a checkout. Links are left out: covering
    one would cover what it points to. Listed anew for each child (a few µs), so what appears
    later (a class run's out/) is hidden too."""
    found = _checkout()
    if found is None:
        return ()
    parent, git_directories = found
    try:
        with os.scandir(parent) as listing:  # the entry types come with the listing: no stat
            entries = [e.path for e in listing
                       if e.name != "grader" and not e.is_symlink() and (e.is_dir() or e.is_file())]
    except OSError:  # unreadable to the grader itself: then to the child too
        entries = []
    return (*sorted(entries), *git_directories)


def hidden_paths(paths: tuple[str, ...] = (), checkout: bool = True, keep: tuple[str, ...] = ()) -> tuple[str, ...]:
    """What a child can be kept from seeing: of ``paths`` (the exercises with their references
    and checks, the folders submissions came from, a class run's output folder) every existing
    folder, and with ``checkout`` every entry of the grader's own checkout but grader/ (plain
    files included), except what holds the grader, Python, the temporary directory itself or
    a path of ``keep`` (the compilation cache)."""
    needed = [*_python_installation(), *(os.path.realpath(n) for n in (tempfile.gettempdir(), *keep))]
    candidates = [os.path.realpath(p) for p in paths if os.path.isdir(p)]
    if checkout:
        candidates += checkout_entries()
    hidden = [c for c in candidates if not any(_inside(n, c) for n in needed) and not _inside(GRADER_PACKAGE, c)]
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
        "workdir": {"active": True, "detail": "a fresh folder in the grader's temporary directory, removed "
                                              "afterwards whatever it holds (any depth, any permissions)"},
        "cleanup": {"active": True, "detail": cleanup},
    }


def watched_scratch(limits: Limits) -> dict[str, Any]:
    """The ``scratch`` protection of a child that has no private tmpfs (no mount namespace)."""
    return {"active": True, "detail": f"its working folder is on the grader's disk, measured while it runs: the "
                                      f"process is stopped past {limits.scratch_mib} MiB or {limits.scratch_files} "
                                      "files (it may overshoot by what it writes between two measurements); "
                                      "/tmp, /var/tmp and /dev/shm are the machine's, limited only per file "
                                      f"({limits.file_mib} MiB)"}


def _make_workdir(lease: UidLease | None) -> tuple[str, str]:
    """The child's folder in the grader's temporary directory, holding ``scratch`` (the child's
    working folder); owned by the child's uid. A full disk here is the grader's problem, never
    the student's: it raises SandboxError."""
    workdir = ""
    try:
        workdir = tempfile.mkdtemp(prefix="jaxgrade-")
        scratch = os.path.join(workdir, SCRATCH)
        os.mkdir(scratch, 0o700)
        if lease is not None:
            for path in (workdir, scratch):
                os.chown(path, lease.uid, lease.uid)
        return workdir, scratch
    except OSError as error:
        if workdir:
            remove_tree(workdir)
        full = " (the disk is full)" if error.errno in (errno.ENOSPC, errno.EDQUOT) else ""
        raise SandboxError(f"could not create the submission's folder in {tempfile.gettempdir()}: "
                           f"{error.strerror or error}{full}") from None


class Child:
    """One live child process. Use as a context manager; ``request`` sends one message and
    waits at most ``timeout`` seconds for the answer. ``hide``: folders the child must not
    see (the submission's own folder, which holds other students' files in batch grading)."""

    def __init__(self, devices: int, limits: Limits, compile_cache: str | None = None,
                 hide: tuple[str, ...] = (), launcher: Launcher | None = None) -> None:
        self.limits = limits
        self.marker = f"{os.getpid()}-{next(_numbers)}"
        self.lease = UidLease() if limits.confine and os.geteuid() == 0 else None
        try:
            self.workdir, self.scratch = _make_workdir(self.lease)
        except SandboxError:
            if self.lease is not None:
                self.lease.release()
            raise
        made = ChildGroup.make(f"jaxgrade-{self.marker}", limits.memory_mib + limits.scratch_mib, process_limit()) \
            if limits.confine else "plain child"
        self.group = made if isinstance(made, ChildGroup) else None
        self._watch: ScratchWatch | None = None
        self._scratch_fd = -1  # the child's private tmpfs, opened through its mount namespace
        self._stopped: str | None = None  # why the grader stopped the child, if it did
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        output_r, output_w = os.pipe()
        env = child_environment(devices, self.scratch, self.marker, compile_cache)
        if not limits.confine:  # exactly the foundation's child, for a fair overhead figure
            del env["OPENBLAS_NUM_THREADS"]
        arguments = [sys.executable, "-I", "-c", BOOT, str(to_child_r), str(from_child_w)]
        if limits.confine:
            policy = Policy(workdir=self.workdir, scratch=self.scratch, keep_fds=(to_child_r, from_child_w),
                            uid=self.lease.uid if self.lease else None, gid=self.lease.uid if self.lease else None,
                            cpu_s=limits.cpu_s, memory_mib=limits.memory_mib, file_mib=limits.file_mib,
                            scratch_mib=limits.scratch_mib, scratch_files=limits.scratch_files,
                            hide=hidden_paths(hide, keep=(compile_cache,) if compile_cache else ()),
                            reach=(PACKAGE_PARENT, *([compile_cache] if compile_cache else [])),
                            read_only=(compile_cache,) if compile_cache else (),
                            cgroups=self.group.paths if self.group else ())
            arguments.append(policy.to_json())
        self.protections = parent_protections(limits, self.lease)
        self.protections["cgroup"] = {"active": True, "detail": self.group.detail()} if self.group else {
            "active": False, "detail": "memory is bounded per process only (shared memory and memfd pages are not "
                                       "counted), processes per uid, CPU not at all: " + str(made)}
        try:
            if launcher is not None:  # grader.sandbox.pool: forked, ready-imported, from a warm process
                self.process = launcher(arguments, env, self.scratch, (to_child_r, from_child_w, output_w))
            else:
                self.process = subprocess.Popen(
                    arguments, pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=output_w,
                    stderr=output_w, cwd=self.scratch, env=env, start_new_session=True)
        except BaseException:  # no child: give back what was made for it
            for fd in (self._to_child, self._from_child, output_r):
                os.close(fd)
            if self.lease is not None:
                self.lease.release()
            self._remove_group()
            self._remove_workdir()
            raise
        finally:
            for fd in (to_child_r, from_child_w, output_w):
                os.close(fd)
        if self.group is not None:
            self.group.add(self.process.pid)
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
            if self.limits.confine:
                self._bound_scratch()
        return self._ready

    def _bound_scratch(self) -> None:
        """Before any student code runs: hold the child's private tmpfs (to tell when it is full),
        or, where it has none, start measuring its folder on the grader's disk."""
        if self.protections.get("scratch", {}).get("active"):
            try:  # the tmpfs exists only in the child's mount namespace: reach it through /proc
                self._scratch_fd = os.open(f"/proc/{self.process.pid}/root{self.scratch}",
                                           os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                pass  # then a full scratch is only the student's own ENOSPC
            return
        self.protections["scratch"] = watched_scratch(self.limits)
        self._watch = ScratchWatch(self.workdir, self.limits.scratch_mib << 20, self.limits.scratch_files,
                                   self._stop)

    def _stop(self, reason: str) -> None:
        """Kill the child (and all it started) for a reason of the grader's: its next answer is
        ``reason`` as an incident."""
        self._stopped = reason
        self.kill()
        if self.lease is not None:
            kill_uid(self.lease.uid)
        else:
            kill_marked(self.marker)

    def _scratch_full(self) -> str | None:
        """Why the child's private tmpfs counts as full (no block or no inode left), if it does."""
        if self._scratch_fd < 0:
            return None
        room = os.fstatvfs(self._scratch_fd)
        if room.f_bavail == 0:
            return f"your code filled its {self.limits.scratch_mib} MiB of scratch space"
        if room.f_favail == 0:
            return f"your code filled its scratch space with {self.limits.scratch_files} files and folders"
        return None

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
        answer = self._receive(deadline, during)
        full = self._scratch_full()
        if full is not None:  # ENOSPC told the code; the report says it plainly, as the watch does
            self.kill()
            raise ChildFailure("disk", f"{full} (its working folder, /tmp, /var/tmp and /dev/shm together) {during}")
        return answer

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
        if self._stopped is not None:
            return ChildFailure("disk", f"{self._stopped}; the grader stopped it {during}")
        if code < 0:
            name = _signal_name(-code)
            if -code == signal.SIGXCPU:
                return ChildFailure("time", f"the process used up its {self.limits.cpu_s} s of CPU time {during}")
            if -code == signal.SIGKILL and self.group is not None and self.group.out_of_memory():
                return ChildFailure("memory", f"the process used more than its {self.group.memory_mib} MiB of memory "
                                              "(shared memory, memfd and its scratch files included) and was stopped "
                                              f"{during}")
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
        if self._watch is not None:
            self._watch.close()
        self.kill()
        if self.lease is not None:
            self.lease.release()
        else:
            kill_marked(self.marker)
        self.process.wait()
        for fd in (self._to_child, self._from_child, self._scratch_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        self._closed = self.output.finish()
        self._remove_group()
        self._remove_workdir()
        return self._closed

    def _remove_group(self) -> None:
        leaks = self.group.remove() if self.group is not None else []
        if leaks:
            log.error("could not remove the sandbox's control group: %s", "; ".join(leaks))
            self.protections["cgroup"] = {"active": False, "detail": f"not removed: {'; '.join(leaks)}"}

    def _remove_workdir(self) -> None:
        """Remove the child's folder; what cannot be removed is said loudly, in the grader's log
        and in the report's protections, never ignored."""
        leaks = remove_tree(self.workdir)
        if leaks:
            shown = "; ".join(leaks[:5]) + (f"; and {len(leaks) - 5} more" if len(leaks) > 5 else "")
            log.error("could not remove everything the sandbox left in %s: %s", self.workdir, shown)
            self.protections["workdir"] = {"active": False, "detail": f"not removed entirely: {shown}"}

    def __enter__(self) -> "Child":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
