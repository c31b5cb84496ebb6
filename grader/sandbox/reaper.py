"""Finding and killing what a child left running, and what it left in the grader's IPC namespace,
in the machine's world-writable folders and in its uid's kernel keyrings.

As root each child runs under a uid of its own (grader.sandbox.uids): every process of that uid is
killed, by a process of that uid, so nothing the submission started (double-forked, ``setsid``)
survives it. Without root, every process carrying the child's environment marker is killed
(a process can scrub its environment, so that is the fallback, and how tests look).
"""
from __future__ import annotations

import ctypes
import logging
import os
import re
import select
import signal
import time

from grader.child.keyrings import clear_own
from grader.sandbox.world_writable import remove_owned, world_writable_folders

MARKER = "JAXGRADE_SANDBOX"  # in every child's environment: <grader pid>-<child number>
log = logging.getLogger("jaxgrade.sandbox")

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
        # exactly that marker ("1234-1" is not "1234-12"), or every one a prefix begins
        if any(v == needle or (marker.endswith("-") and v.startswith(needle)) for v in variables) \
                and _alive(_status(pid)[0]):
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


def key_usage(uid: int) -> str | None:
    """What ``uid``'s keys take, as /proc/key-users states it (its keys, and its quota of keys and
    bytes used), or None where it has none or the kernel has no keyrings. The first field (the
    kernel's references to the record) is left out: it moves with processes, not with keys."""
    try:
        with open("/proc/key-users") as handle:
            for line in handle:
                owner, _, rest = line.partition(":")
                if owner.strip() == str(uid):
                    return " ".join(rest.split()[1:])
    except OSError:
        pass
    return None


def clear_keyrings(uid: int) -> bool:
    """Empty ``uid``'s user, user-session and persistent keyrings, from a process of that uid
    (only its own are reachable by their special ids): a key a child added there would be found
    by the next child leased the uid. True when done (or the kernel has no keyrings)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            code = 1 if clear_own() else 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def sweep_uid(uid: int, keyrings: bool = True) -> bool:
    """Kill every process of ``uid``, then remove its IPC objects, what it owns in the machine's
    world-writable folders (a child without a mount namespace writes the real /tmp, /run/lock...)
    and empty its keyrings (``keyrings``: a fork of this process, left out when nothing was added
    to them); True if nothing is left."""
    if not kill_uid(uid):
        return False
    leaks = remove_ipc_objects(uid) + remove_owned(uid, world_writable_folders())
    if keyrings and not clear_keyrings(uid):
        leaks.append("its keyrings could not be emptied")
    if leaks:
        log.error("could not remove what sandbox uid %d left: %s", uid, "; ".join(leaks))
    return not leaks


def wait_for_exit(pid: int, limit_s: float) -> None:
    """Until process ``pid`` (not a child of this one: a process that started a background one)
    has exited, or ``limit_s`` has passed: a pidfd where the kernel has them, else polling."""
    try:
        handle = os.pidfd_open(pid)
    except OSError:  # gone already, or no pidfd here
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except OSError:
                return
            time.sleep(0.05)
        return
    try:
        select.select([handle], [], [], limit_s)
    finally:
        os.close(handle)
