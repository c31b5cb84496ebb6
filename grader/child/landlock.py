"""Landlock (Linux 5.13 and later): what a confined process running as the grader's own user
may still write, connect to and signal.

Without root there is no uid of its own to drop to: the child and the witness run as the grader's
user, and a mount namespace (where unprivileged user namespaces are allowed) hides paths but
leaves every file of that user writable (a CI runner's ``$GITHUB_OUTPUT``, the grader's own
output). Landlock takes those rights away from the process and everything it starts, whatever
its uid: it may write only beneath the folders it is given (its scratch, the temporary folders,
/dev/null), connect or bind no TCP port where it has no network namespace (ABI 4), and signal
or reach the abstract sockets of no process outside its own domain (ABI 6). Reading is left to
file permissions and the mount namespace. ``grader.child.confine`` applies it last, after every
mount (a Landlocked process can no longer change its mounts).
"""
from __future__ import annotations

import ctypes
import os

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same numbers on every architecture
_VERSION_FLAG = 1  # LANDLOCK_CREATE_RULESET_VERSION: ask for the ABI version
_PATH_BENEATH = 1
# Filesystem rights (include/uapi/linux/landlock.h): every one that changes something.
_WRITE_FILE, _TRUNCATE = 1 << 1, 1 << 14
_CHANGES = (_WRITE_FILE | 1 << 4 | 1 << 5 | 1 << 6 | 1 << 7 | 1 << 8 | 1 << 9 | 1 << 10 | 1 << 11 | 1 << 12)
_REFER = 1 << 13  # ABI 2: moving a file between folders
_NET_TCP = 1 << 0 | 1 << 1  # ABI 4: bind and connect
_SCOPES = 1 << 0 | 1 << 1  # ABI 6: abstract unix sockets and signals outside the domain


class _Ruleset(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def version() -> int:
    """The kernel's Landlock ABI version, 0 where it has none (or forbids it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    found = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION_FLAG))
    return max(0, int(found))


def restrict(writable: tuple[str, ...], no_network: bool) -> tuple[bool, str]:
    """Restrict this process (and what it starts) to writing beneath ``writable`` and, with
    ``no_network``, to no TCP; (applied, what it does or why it could not). The process must
    have set ``PR_SET_NO_NEW_PRIVS``."""
    abi = version()
    if abi < 1:
        return False, "the kernel has no Landlock"
    libc = ctypes.CDLL(None, use_errno=True)
    changes = _CHANGES | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    ruleset = _Ruleset(changes, _NET_TCP if no_network and abi >= 4 else 0, _SCOPES if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24  # what this ABI's struct holds
    fd = libc.syscall(_CREATE_RULESET, ctypes.byref(ruleset), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        return False, f"landlock_create_ruleset failed: {os.strerror(ctypes.get_errno())}"
    allowed = []
    try:
        for path in dict.fromkeys(writable):
            try:
                parent = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # nothing there to write beneath
            try:
                folder = os.path.isdir(path)
                rule = _PathBeneath(changes if folder else _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0), parent)
                if libc.syscall(_ADD_RULE, fd, _PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    return False, f"landlock_add_rule({path}) failed: {os.strerror(ctypes.get_errno())}"
                allowed.append(path)
            finally:
                os.close(parent)
        if libc.syscall(_RESTRICT_SELF, fd, ctypes.c_uint32(0)) != 0:
            return False, f"landlock_restrict_self failed: {os.strerror(ctypes.get_errno())}"
    finally:
        os.close(fd)
    also = []
    if no_network and abi >= 4:
        also.append("no TCP connection or port")
    if abi >= 6:
        also.append("no signal to, or abstract socket of, a process outside its sandbox")
    return True, (f"Landlock (ABI {abi}): it writes nowhere but beneath {', '.join(allowed)}"
                  + "".join(f"; {a}" for a in also))
