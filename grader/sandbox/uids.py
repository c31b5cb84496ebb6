"""Dedicated uids for children, leased machine-wide when the grader is root (:class:`UidLease`);
what a uid's last child left is swept with grader.sandbox.reaper."""
from __future__ import annotations

import fcntl
import os
import pwd
import stat
import tempfile
from pathlib import Path

from grader.errors import SandboxError
from grader.sandbox.reaper import sweep_uid

SANDBOX_UIDS = range(61000, 62000)  # dedicated uids, one per live child, when the grader is root
# The witnesses' own (grader.sandbox.witness): a witness never shares a uid with a child, whose
# submission could otherwise signal it, read its memory through /proc or write where it writes.
WITNESS_UIDS = range(62000, 63000)
# Where uid leases live: fixed, root-only and the same for every grader on the machine whatever its
# $TMPDIR (the first whose parent exists). /run is emptied at boot, as leases should be.
LEASE_DIRECTORIES = ("/run/jaxgrade", "/var/lib/jaxgrade")
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
    """One dedicated uid (and gid of the same number) for one live child or witness, from
    ``uids``. The lease is an flock on a file in a root-only directory that is the same for
    every grader on the machine: it dies with the grader, so a crashed grader leaks no uid, and
    concurrent graders (whatever their $TMPDIR) never share one."""

    def __init__(self, uids: range = SANDBOX_UIDS) -> None:
        directory, legacy = lease_directory(), _legacy_lease_directories()
        for uid in uids:  # lowest first: the same few uids (and lock files) serve again and again
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
        raise SandboxError(f"no free sandbox uid in {uids.start}-{uids.stop - 1}: "
                           "too many children at once, or leftovers that cannot be killed")

    def release(self, keyrings: bool = True) -> bool:
        """Kill what still runs under the uid and remove what it left (``keyrings``: its keyrings
        too), then give the uid back; False if something could not be (the uid then stays locked
        until this grader exits)."""
        if self._fd < 0:
            return True
        if not sweep_uid(self.uid, keyrings):
            return False
        for fd in (self._fd, *self._legacy):
            os.pwrite(fd, CLEAN, 0)
            os.close(fd)
        self._fd, self._legacy = -1, []
        return True

