"""Kernel keyrings: as "{ROLE}". add: puts a key in its uid's user keyring (and in its session
keyring) for the next student leased the same sandbox uid; look: searches its user keyring for
that key. Both print their uid and their session keyring's id, so the test can tell whether
the session keyring is the grader's."""
import ctypes
import os

SYSCALLS = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING = -3, -4
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def keyctl(*arguments):
    return libc.syscall(ctypes.c_long(SYSCALLS[1]), *(ctypes.c_long(a) if isinstance(a, int) else a
                                                       for a in arguments))


session = keyctl(0, KEY_SPEC_SESSION_KEYRING, 0)
if "{ROLE}" == "add":
    for keyring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING):
        added = libc.syscall(ctypes.c_long(SYSCALLS[0]), b"user", b"jaxgrade-leak", b"answers", ctypes.c_long(7),
                             ctypes.c_long(keyring))
        print(f"ADDED {keyring} {added} errno {ctypes.get_errno()}", flush=True)
else:
    found = keyctl(10, KEY_SPEC_USER_KEYRING, b"user", b"jaxgrade-leak", 0)  # KEYCTL_SEARCH
    print("FOUND" if found > 0 else f"ABSENT errno {ctypes.get_errno()}", flush=True)
print(f"UID {os.getuid()} SESSION {session}", flush=True)


def replicated_sharding_value(x):
    return x.sum()
