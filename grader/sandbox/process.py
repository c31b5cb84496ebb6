"""Start a submission's child process, talk to it with deadlines, and always clean it up.

Parent side of the sandbox (the child confines itself with ``grader.child.confine``): the child
runs in its own session, in a fresh folder of the grader's temporary directory (it works in
its ``scratch`` folder: a bounded tmpfs where it has a mount namespace, else a folder the
grader measures while it runs), with an environment built from an allowlist, stdin from
/dev/null, and stdout/stderr captured into a bounded buffer (head and tail kept, the rest
counted). Every request has a wall-clock deadline enforced with SIGKILL. As root each child
gets a dedicated unprivileged uid, leased machine-wide with a lock file; on close every
process of that uid is killed, so nothing the submission started (double-forked, ``setsid``)
survives it. Without root the process group and every process carrying the child's
environment marker are killed. Then its folder is removed, whatever it holds
(``grader.sandbox.scratch``); what cannot be is reported. The uids are grader.sandbox.uids, the
killing grader.sandbox.reaper, what the child is kept from seeing grader.sandbox.hiding.
"""
from __future__ import annotations

import errno
import itertools
import logging
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from grader.errors import ChildFailure, Malformed, SandboxError
from grader.importpath import boot, real_locations
from grader.sandbox.cgroup import ChildGroup
from grader.child.confine import Policy, process_limit
from grader.sandbox.hiding import PACKAGE_PARENT, hidden_paths
from grader.sandbox.limits import Limits
from grader.sandbox.reaper import MARKER, key_usage, kill_marked, kill_uid
from grader.sandbox.output import CapturedOutput
from grader.sandbox.scratch import ScratchWatch, remove_tree
from grader.sandbox.settling import later
from grader.sandbox.uids import SANDBOX_UIDS, UidLease
from grader.sandbox.world_writable import owned_usage, world_writable_folders
from grader.xla_options import XLA_FLAGS

# grader.wire (the framing both sides speak) is imported where a message is sent or read, not
# here: it imports NumPy (~0.09 s), and `jaxgrade check` imports this module to spawn its child
# before anything else, NumPy after (grader.cli; docs/performance.md).

ENV_ALLOWLIST = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")
# Starts the child another way than exec (grader.sandbox.pool forks it): gets the exec command line, its
# environment, working directory and (inbox read end, outbox write end, output write end); returns
# an object with the pid/poll/wait/returncode of subprocess.Popen. The child joins a new process group.
Launcher = Callable[[list[str], dict[str, str], str, tuple[int, int, int]], Any]
# Large messages (over LARGE_MESSAGE_BYTES) are read and decoded one at a time in a process,
# however many children a class run reads from threads (-j): the others wait unread in their
# pipes, their wait not counted against their time. A flood from every child then costs the
# grader one body and one decoding (measured at -j 4: two slots, one body read beside another's
# decoding, peaked at 305-326 MiB; one slot at 237-239 MiB; #41).
LARGE_BODIES = threading.BoundedSemaphore(1)


@dataclass(frozen=True)
class Role:
    """What a confined process is for: the code it runs (``boot``'d, with its inbox and outbox,
    then its policy, then ``arguments``), the uids it is leased from, and folders it reads but
    never writes. The submission's child and the witness (grader.sandbox.witness) are both
    started, confined, limited and cleaned up by ``ChildProcess``; only this differs."""
    entry: str
    uids: range = SANDBOX_UIDS
    gid: int | None = None  # the group it runs as (None: the leased uid's own number)
    arguments: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()


CHILD = Role("from grader.child.entry import main; main(first_line)")


class Launch(NamedTuple):
    """What a child is started with (``ChildProcess``'s arguments): two children started with
    equal ones are the same child (confinement, limits, environment, what it cannot see). A
    child started early (``jaxgrade check`` spawns it before its own imports) is used by a
    grading only when its ``launch`` is the one the grading would start (grader.observe.session)."""
    devices: int
    limits: Limits
    compile_cache: str | None
    hide: tuple[str, ...]
    launcher: Launcher | None
SCRATCH = "scratch"  # the child's working folder (cwd, HOME, TMPDIR), inside the folder holding its copy
# How a "protocol" incident begins: what the child sends on its channel is the submission's doing
# (its code runs in that process and can write to the descriptor), never the grader's fault.
INTERFERED = "your code interfered with grading: its process sent"
log = logging.getLogger("jaxgrade.sandbox")
_numbers = itertools.count(1)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


# glibc's allocator in the zygote and so in every child and witness forked from it: a heap grown
# 64 MiB at a time, freed memory kept (up to 256 MiB) rather than given back at once, blocks up
# to 32 MiB taken from the heap rather than each mapped afresh, two arenas. Each fresh page
# costs a fault, and under gVisor a costly one: on the 13-core host a class run took 8-9% less
# time at -j 1 and at -j 12 (issue #57; docs/performance.md). None of it caps what a child may use.
MALLOC_SETTINGS = {"MALLOC_TOP_PAD_": str(64 << 20), "MALLOC_TRIM_THRESHOLD_": str(256 << 20),
                   "MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_ARENA_MAX": "2"}


def child_environment(devices: int, workdir: str, marker: str, compile_cache: str | None = None) -> dict[str, str]:
    """The child's whole environment: an allowlist of the grader's variables, then ours.
    The grader's own variables (tokens, credentials) never reach a submission."""
    env = {k: os.environ[k] for k in ENV_ALLOWLIST if k in os.environ}
    env.update(HOME=workdir, TMPDIR=workdir, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1",
               PYTHONUNBUFFERED="1", JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES=str(devices),
               JAX_ENABLE_X64="0", TF_CPP_MIN_LOG_LEVEL="2", XLA_FLAGS=XLA_FLAGS,
               # one thread until confine() ran: namespaces are per-thread (OpenBLAS starts a pool)
               OPENBLAS_NUM_THREADS="1", **MALLOC_SETTINGS, **{MARKER: marker})
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


def watched_scratch(limits: Limits, own_uid: bool) -> dict[str, Any]:
    """The ``scratch`` protection of a child that has no private tmpfs (no mount namespace)."""
    where = ("its working folder and what its uid owns in /tmp, /var/tmp, /dev/shm and the machine's other "
             "world-writable folders are on the grader's disks, measured together while it runs" if own_uid else
             "its working folder is on the grader's disk, measured while it runs")
    rest = ("" if own_uid else "; /tmp, /var/tmp, /dev/shm and the machine's other world-writable folders are "
            f"the machine's, limited only per file ({limits.file_mib} MiB)")
    return {"active": True, "detail": f"{where}: the process is stopped past {limits.scratch_mib} MiB or "
                                      f"{limits.scratch_files} files (it may overshoot by what it writes between two "
                                      f"measurements){rest}"}


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


class ChildProcess:
    """The grader's handle on one live child process (what serves inside it is
    grader.child.server.Child). Use as a context manager; ``request`` sends one message and
    waits at most ``timeout`` seconds for the answer. ``hide``: folders the child must not
    see (the submission's own folder, which holds other students' files in batch grading)."""

    def __init__(self, devices: int, limits: Limits, compile_cache: str | None = None,
                 hide: tuple[str, ...] = (), launcher: Launcher | None = None, role: Role = CHILD) -> None:
        self.limits = limits
        self.launch = Launch(devices, limits, compile_cache, tuple(hide), launcher)
        self.marker = f"{os.getpid()}-{next(_numbers)}"
        self.lease = UidLease(role.uids) if limits.confine and os.geteuid() == 0 else None
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
        arguments = [sys.executable, "-I", "-c", boot(role.entry), str(to_child_r), str(from_child_w)]
        if limits.confine:
            read_only = (*([compile_cache] if compile_cache else []), *role.read_only)
            policy = Policy(workdir=self.workdir, scratch=self.scratch, keep_fds=(to_child_r, from_child_w),
                            uid=self.lease.uid if self.lease else None,
                            gid=(self.lease.uid if role.gid is None else role.gid) if self.lease else None,
                            limits=limits.in_child(),
                            hide=hidden_paths(hide, keep=(*real_locations(), *read_only)),
                            reach=(PACKAGE_PARENT, *real_locations(), *read_only), read_only=read_only,
                            cgroups=self.group.paths if self.group else (),
                            temporaries=world_writable_folders())
            arguments.append(policy.to_json())
        elif role.arguments:
            arguments.append("")  # no policy: the role's own arguments keep their places
        arguments.extend(role.arguments)
        self.protections = parent_protections(limits, self.lease)
        self.protections["cgroup"] = {"active": True, "detail": self.group.detail()} if self.group else {
            "active": False, "detail": "memory is bounded per process only (shared memory and memfd pages are not "
                                       "counted), processes per uid, CPU not at all: " + str(made)}
        self.spawned_at = time.monotonic()  # when it was asked for, and when its greeting was read (grader.timings)
        self.greeted_at: float | None = None
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
        self._header = bytearray()  # the next message's length, as far as read
        self._body: bytearray | None = None  # its body, once its length is known; ``_got`` bytes read
        self._got = 0
        self._ready: dict[str, Any] | None = None
        self._keys: str | None = None  # what its uid's keys took once it was ready (reaper.key_usage)
        self._closed: dict[str, Any] | None = None

    @property
    def ready(self) -> dict[str, Any]:
        """The child's greeting (JAX version, devices, protections in force); waits for it the
        first time. Starting the process and waiting for it are apart so the parent can work
        while JAX imports."""
        if self._ready is None:
            self._ready = self._receive(time.monotonic() + self.limits.startup_s, "while starting JAX")
            self.greeted_at = time.monotonic()
            if self._ready.get("op") != "ready":
                raise ChildFailure("sandbox", f"the grading process could not start: {self._ready.get('error')}")
            if self.lease is not None:  # the child emptied its uid's keyrings; the submission has not run yet
                self._keys = key_usage(self.lease.uid)
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
        self.protections["scratch"] = watched_scratch(self.limits, self.lease is not None)
        uid, folders = (self.lease.uid, world_writable_folders()) if self.lease else (None, ())
        # with a uid of its own, what it writes in the world-writable folders counts against the same
        # bound; its working folder (the uid's, in /tmp when $TMPDIR is there) is counted by the watch
        workdir = os.stat(self.workdir)
        counted = (workdir.st_dev, workdir.st_ino)
        also = (lambda most, entries: owned_usage(uid, folders, most, entries, counted)) if uid is not None else None
        self._watch = ScratchWatch(self.workdir, self.limits.scratch_mib << 20, self.limits.scratch_files,
                                   self._stop, also)

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

    def request(self, message: dict[str, Any], timeout: float, during: str,
                keep: Callable[[dict[str, Any]], Any] | None = None) -> Any:
        """The child's answer to ``message``, as ``keep`` makes it the grader's own (see ``decode_message``)."""
        from grader.wire import frame  # (imported here, not above: see below the imports)
        self.ready
        deadline = time.monotonic() + timeout
        self._send(frame(message), deadline, during)
        answer = self._receive(deadline, during, keep)
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

    def _receive(self, deadline: float, during: str, keep: Callable[[dict[str, Any]], Any] | None = None) -> Any:
        """The child's next message. Its length is read first and its body into a buffer of
        exactly that size (nothing beyond the message is read), which ``decode_message`` checks
        for shape before decoding: what the child sends costs the parent at most one message's
        bytes, and more is the submission's doing (a "protocol" incident)."""
        from grader.wire import decode_message
        holding = False
        try:
            while True:
                if self._body is not None and self._got == len(self._body):
                    body, self._body = self._body, None
                    try:
                        return decode_message(body, keep) if keep else decode_message(body)
                    except Malformed as error:
                        raise ChildFailure("protocol", f"{INTERFERED} unreadable data {during} ({error})") from None
                deadline, holding = self._receive_some(deadline, during, holding)
        finally:
            if holding:
                LARGE_BODIES.release()

    def _receive_some(self, deadline: float, during: str, holding: bool) -> tuple[float, bool]:
        """Read what the child has sent of its next message, within ``deadline``; returns the
        deadline (later by any wait for a large body's turn: another child's message is not this
        child's time) and whether this reader now holds one of LARGE_BODIES."""
        from grader.wire import HEADER, LARGE_MESSAGE_BYTES, MAX_MESSAGE_BYTES
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise ChildFailure("time", f"no answer within the time limit {during}")
            readable, _, _ = select.select([self._from_child], [], [], remaining)
            if not readable:
                continue
            if self._body is None:
                chunk = os.read(self._from_child, HEADER.size - len(self._header))
                if not chunk:
                    raise self._death(during)
                self._header += chunk
                if len(self._header) == HEADER.size:
                    (length,) = HEADER.unpack(self._header)
                    self._header = bytearray()
                    if length > MAX_MESSAGE_BYTES:
                        raise ChildFailure("protocol", f"{INTERFERED} a message of {length:,} bytes {during} (the "
                                                       f"channel's limit is {MAX_MESSAGE_BYTES:,})")
                    if length > LARGE_MESSAGE_BYTES and not holding:
                        waited = time.monotonic()
                        LARGE_BODIES.acquire()
                        holding, deadline = True, deadline + time.monotonic() - waited
                    self._body, self._got = bytearray(length), 0
                    if length == 0:
                        return deadline, holding
                continue
            got = os.readv(self._from_child, [memoryview(self._body)[self._got:]])
            if not got:
                raise self._death(during)
            self._got += got
            if self._got == len(self._body):
                return deadline, holding

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

    def close(self, settle: bool = True) -> dict[str, Any]:
        """End the child and everything it started; return its captured output. ``settle``:
        the child is asked to leave, then everything it left is given back before this returns
        (its process reaped, its control group, folder and uid). Otherwise every process of it
        is killed at once, its output read as far as it was written, and the rest is given back
        in the background (``grader.sandbox.settling``: a class need not wait for it)."""
        if self._closed is not None:
            return self._closed
        if settle and self.process.poll() is None:
            from grader.wire import frame
            try:
                os.write(self._to_child, frame({"op": "exit"}))
                self.process.wait(timeout=1)
            except (OSError, subprocess.TimeoutExpired):
                pass
        elif self.process.poll() is None:
            try:  # it flushes what it printed, says so, and is killed without waiting for it to end
                self.request({"op": "exit"}, 1.0, "closing")
            except Exception:  # noqa: BLE001 (dead, stuck or lying: it is killed all the same)
                pass
        if self._watch is not None:
            self._watch.close()
        self.kill()  # its process group: the child, and what it started without leaving the group
        if settle:
            self._give_back(say=True)
        self._closed = self.output.finish(killed=not settle)
        for fd in (self._to_child, self._from_child, self._scratch_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        if not settle:
            later(self._give_back)
        return self._closed

    def _give_back(self, say: bool = False) -> None:
        """Kill what is left of the child (a process that left its group), reap it, sweep its
        uid, remove its control group and folder. ``say``: what cannot be removed also goes in
        ``protections`` (read by the report: not from the background, where a report may be
        reading them)."""
        self.process.wait()  # killed already: once it is reaped, a process of the uid left is rare (no fork to kill it)
        if self.lease is not None:
            # its keyrings as the child left them before the submission ran: nothing to empty
            untouched = self._keys is not None and key_usage(self.lease.uid) == self._keys
            if not self.lease.release(keyrings=not untouched):  # kills every process of the uid first
                log.error("sandbox uid %d stays leased until the grader exits: what it left could not be removed",
                          self.lease.uid)
        else:
            kill_marked(self.marker)
        self._remove_group(say)
        self._remove_workdir(say)

    def _remove_group(self, say: bool = True) -> None:
        leaks = self.group.remove() if self.group is not None else []
        if leaks:
            log.error("could not remove the sandbox's control group: %s", "; ".join(leaks))
        if leaks and say:
            self.protections["cgroup"] = {"active": False, "detail": f"not removed: {'; '.join(leaks)}"}

    def _remove_workdir(self, say: bool = True) -> None:
        """Remove the child's folder; what cannot be removed is said loudly, in the grader's log
        and (``say``) in the report's protections, never ignored."""
        leaks = remove_tree(self.workdir)
        if leaks:
            shown = "; ".join(leaks[:5]) + (f"; and {len(leaks) - 5} more" if len(leaks) > 5 else "")
            log.error("could not remove everything the sandbox left in %s: %s", self.workdir, shown)
        if leaks and say:
            self.protections["workdir"] = {"active": False, "detail": f"not removed entirely: {shown}"}

    def __enter__(self) -> "ChildProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
