"""The kernel keyrings a sandboxed process holds, through the ``keyctl`` system call (no
keyutils needed).

A process inherits its parent's session keyring, across fork and a uid drop: a child started
by the grader (root) would possess the grader's session keyring and could read what is kept
there. And every uid has a user keyring (and a user-session keyring, and where the kernel has
them a persistent one) that outlive its processes: a key one submission adds there would be
found by the next student leased the same sandbox uid. So the child joins a fresh anonymous
session keyring before the submission runs (``fresh_session``), and the uid's own keyrings are
emptied by a process of that uid (``clear_own``): in the child before the submission runs, and
by the grader after the child ended (``grader.sandbox.reaper.clear_keyrings``).
"""
from __future__ import annotations

import ctypes
import os
import platform

# keyctl's number per architecture (unistd.h); elsewhere keyrings are left as they are.
KEYCTL = {"x86_64": 250, "aarch64": 219, "i686": 288, "armv7l": 311, "ppc64le": 250, "s390x": 280}.get(
    platform.machine())
KEYCTL_GET_KEYRING_ID, KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 0, 1, 7, 22
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -3, -4, -5


def _keyctl(*arguments: int | None) -> int:
    """keyctl(2); the result, or OSError."""
    if KEYCTL is None:
        raise OSError(0, f"keyctl's system call number is unknown on {platform.machine()}")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    result = libc.syscall(ctypes.c_long(KEYCTL), *(ctypes.c_long(a) if a is not None else ctypes.c_void_p(None)
                                                   for a in arguments))
    if result == -1:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    return result


def fresh_session() -> int:
    """Join a new anonymous session keyring (keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)): this
    process and those it starts no longer possess the one they inherited. Its id."""
    return _keyctl(KEYCTL_JOIN_SESSION_KEYRING, None)


def clear_own() -> list[str]:
    """Empty the calling uid's user and user-session keyrings, and its persistent keyring where
    the kernel has one; what could not be emptied (a kernel without keyrings has none)."""
    failed = []
    targets = [("user", KEY_SPEC_USER_KEYRING), ("user-session", KEY_SPEC_USER_SESSION_KEYRING)]
    try:  # the persistent keyring of this uid, linked into the session keyring while it is looked up
        targets.append(("persistent", _keyctl(KEYCTL_GET_PERSISTENT, -1, KEY_SPEC_SESSION_KEYRING)))
    except OSError:
        pass  # EOPNOTSUPP: the kernel has no persistent keyrings
    for name, keyring in targets:
        try:
            _keyctl(KEYCTL_CLEAR, keyring)
        except OSError as error:
            if error.errno not in (0, 38):  # ENOSYS: no keyrings in this kernel
                failed.append(f"the {name} keyring: {error.strerror}")
    return failed
