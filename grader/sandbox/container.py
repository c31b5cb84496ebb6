"""The container around a graded submission, where the sandbox can make no namespaces.

Gradescope runs run_autograder as root in a Docker container with Docker's default
capabilities (PrairieLearn's graders likewise): no CAP_SYS_ADMIN, so the sandbox can make no
namespaces (no private network, no hidden paths, no private /tmp), while it can still give the
child a uid of its own (CAP_SETUID). What the namespaces would have done is done here where it
can be, and checked: file permissions keep every copy of the reference and checks from that uid
(Gradescope's own advice: a separate user, and `chmod o=` on what it must not read), and a
seccomp filter refuses the grader and every process it starts IP sockets. What cannot be had is
printed loudly; what must be had (a uid of its own, limits, unreadable secrets) fails closed: no
results.json, so Gradescope reports a failed run instead of a score (grader.authoring.export does that).
"""
from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import socket
import stat
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.errors import GraderFailure

# A uid that owns nothing and belongs to no group, like a sandbox child's (the last of the
# sandbox's range, which it only leases when 999 children run at once): the probe that tries
# to read the secrets runs as it.
PROBE_UID = 61999
# The exercise's files a student may see anyway (they are in the student's export; pack.json: the
# versions it was exported with, grader.authoring.export.pack).
PUBLIC_PARTS = frozenset({"statement.md", "starter.py", "exercise.toml", "pack.json"})
# Files this small are not looked for by content: an empty __init__.py of the exercise would
# match every empty file in site-packages, and closing those would break imports.
MIN_SECRET_BYTES = 64
# Protections the sandbox reports that a Gradescope run cannot do without: grading fails closed.
REQUIRED = ("user", "limits")
# What a fully confined child reports as active (grader/child/confine.py); one it does not
# report at all was not had.
EXPECTED = ("descriptors", "limits", "user", "network", "hidden_paths", "temporary_files")
# Sandbox protections the export puts in place by other means when the sandbox cannot.
COVERED_BY = {"hidden_paths": "secrets", "network": "network_filter"}


@dataclass(frozen=True)
class Protection:
    name: str
    active: bool
    detail: str


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def secret_fingerprints(directory: Path) -> dict[tuple[int, str], str]:
    """(size, sha256) → name of every file of the exercise folder ``directory`` a student must not
    read (the reference, the checks with their hidden inputs, any data beside them)."""
    found = {}
    for path in sorted(directory.rglob("*")):
        if (path.is_file() and path.name not in PUBLIC_PARTS and "__pycache__" not in path.parts
                and path.stat().st_size >= MIN_SECRET_BYTES):
            found[(path.stat().st_size, _digest(path))] = path.name
    return found


def _scan_roots(root: Path, exercises: Path) -> list[Path]:
    """Where copies of the exercise can be: the autograder tree (the bundled source, the build
    folder pip leaves in it, the virtualenv), every site-packages on sys.path, the exercises root."""
    candidates = [root, exercises, *(Path(p) for p in sys.path
                                            if p.rstrip("/").endswith(("site-packages", "dist-packages")))]
    roots: list[Path] = []
    for candidate in candidates:
        real = candidate.resolve()
        if real.is_dir() and not any(real == r or r in real.parents for r in roots):
            roots = [r for r in roots if real not in r.parents] + [real]
    return roots


def find_copies(roots: list[Path], secrets: dict[tuple[int, str], str]) -> list[Path]:
    """Every regular file under ``roots`` with the size and content of a secret (symlinks not followed)."""
    sizes = {size for size, _ in secrets}
    copies = []
    for top in roots:
        for directory, _, files in os.walk(top):
            for name in files:
                path = Path(directory) / name
                try:
                    info = path.lstat()
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode) and info.st_size in sizes and (info.st_size, _digest(path)) in secrets:
                    copies.append(path)
    return sorted(set(copies))


def _close_to_others(path: Path) -> None:
    """``chmod -R o=``: nothing under ``path`` stays readable, writable or enterable by other users."""
    paths = [path, *path.rglob("*")] if path.is_dir() and not path.is_symlink() else [path]
    for each in paths:
        if not each.is_symlink():
            each.chmod(stat.S_IMODE(each.lstat().st_mode) & ~0o007)


def lock(copies: list[Path], slug: str) -> list[Path]:
    """Close every copy to other users: a whole exercise folder (``…/SLUG/``, with the compiled
    ``__pycache__`` pip leaves there) where the copy is in one, else the file alone. Returns what was closed."""
    closed = sorted({copy.parent if copy.parent.name == slug else copy for copy in copies})
    for path in closed:
        _close_to_others(path)
    return closed


def readable_by_other_users(paths: list[Path]) -> list[str]:
    """Which of ``paths`` a process of :data:`PROBE_UID`, with no groups, can open (files) or list
    (folders): what a sandboxed child could read. Raises :class:`GraderFailure` if the probe cannot run."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the probe: drop to the unprivileged uid, try every path, report, leave
        code = 70
        try:
            os.close(read_end)
            os.setgroups([])
            os.setresgid(PROBE_UID, PROBE_UID, PROBE_UID)
            os.setresuid(PROBE_UID, PROBE_UID, PROBE_UID)
            opened = []
            for path in map(str, paths):
                try:
                    os.listdir(path) if os.path.isdir(path) else open(path, "rb").close()
                    opened.append(path)
                except OSError:
                    pass
            os.write(write_end, json.dumps(opened).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        answer = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise GraderFailure(f"could not check what an unprivileged user can read (the probe could not become uid "
                          f"{PROBE_UID}): the container must let root change uid (CAP_SETUID, CAP_SETGID)")
    return json.loads(answer)


def protect_secrets(root: Path, directory: Path, slug: str, exercises: Path) -> Protection:
    """Close every copy of the secret files of exercise ``slug`` (the one in use is ``directory``,
    under the exercises root ``exercises``) to other users, then prove no other user can read any:
    a probe running as an unprivileged uid tries. Raises :class:`GraderFailure` otherwise."""
    copies = find_copies(_scan_roots(root, exercises), secret_fingerprints(directory))
    closed = []
    try:
        closed = lock(copies, slug)
        _close_to_others(directory)  # the copy in use, whatever its files' sizes
        results = root / "results"  # Gradescope's advice: the student's code has no business there
        if results.is_dir():
            _close_to_others(results)
    except OSError as error:
        raise GraderFailure(f"could not close the exercise's files to other users ({error})") from None
    leaks = readable_by_other_users([*copies, *closed, directory])
    if leaks:
        raise GraderFailure("other users can still read " + ", ".join(leaks) + ": the submission could read the "
                          "reference solution or the hidden checks. Make those files private to root.")
    return Protection("secrets", True, f"the reference and checks ({len(copies)} copies) are closed to other users "
                                       f"(chmod o=) and an unprivileged uid was shown unable to read them")


# seccomp: refuse socket(AF_INET | AF_INET6 | AF_PACKET) and io_uring (whose requests seccomp
# does not see) to this process and everything it starts; syscalls of another ABI (x32, i386)
# are refused whole, so socketcall cannot go around the filter.
_SECCOMP_ARCH = {"x86_64": (0xC000003E, 41, 425, 317), "aarch64": (0xC00000B7, 198, 425, 277)}
_BPF_LD_ABS, _BPF_JEQ, _BPF_JGE, _BPF_RET = 0x20, 0x15, 0x35, 0x06
_RET_ALLOW, _RET_EACCES = 0x7FFF0000, 0x00050000 | errno.EACCES


def _network_filter(arch: int, socket_nr: int, io_uring_nr: int) -> bytes:
    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)
    program = [
        op(_BPF_LD_ABS, 4),                              # 0: arch
        op(_BPF_JEQ, arch, 1, 0),                        # 1: ours → 3
        op(_BPF_RET, _RET_EACCES),                       # 2: another ABI
        op(_BPF_LD_ABS, 0),                              # 3: syscall number
        op(_BPF_JGE, 0x40000000, 8, 0),                  # 4: x32 → 13
        op(_BPF_JEQ, io_uring_nr, 7, 0),                 # 5: io_uring_setup → 13
        op(_BPF_JEQ, socket_nr, 1, 0),                   # 6: socket → 8
        op(_BPF_RET, _RET_ALLOW),                        # 7
        op(_BPF_LD_ABS, 16),                             # 8: socket's domain (args[0], low word)
        op(_BPF_JEQ, socket.AF_INET, 3, 0),              # 9 → 13
        op(_BPF_JEQ, socket.AF_INET6, 2, 0),             # 10 → 13
        op(_BPF_JEQ, getattr(socket, "AF_PACKET", 17), 1, 0),  # 11 → 13
        op(_BPF_RET, _RET_ALLOW),                        # 12
        op(_BPF_RET, _RET_EACCES),                       # 13
    ]
    return b"".join(program)


def block_network() -> Protection:
    """Install the network filter on every thread of this process (children inherit it) and check
    that an IP socket is now refused. Never raises: a filter that cannot be had is reported."""
    machine = os.uname().machine
    if machine not in _SECCOMP_ARCH or not sys.platform.startswith("linux"):
        return Protection("network_filter", False, f"no seccomp filter for {machine}: the network is reachable")
    arch, socket_nr, io_uring_nr, seccomp_nr = _SECCOMP_ARCH[machine]
    code = _network_filter(arch, socket_nr, io_uring_nr)

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    program = Program(len(code) // 8, code)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.syscall(seccomp_nr, 1, 1, ctypes.byref(program)) != 0:
        # 38: PR_SET_NO_NEW_PRIVS; seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program)
        why = os.strerror(ctypes.get_errno())
        return Protection("network_filter", False, f"the seccomp filter could not be installed ({why}): "
                                                   "the network is reachable")
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.socket(family, socket.SOCK_STREAM).close()
        except PermissionError:
            continue
        except OSError:
            continue  # no such family here: nothing to reach through it either
        return Protection("network_filter", False, "the seccomp filter is installed but an IP socket still opens")
    return Protection("network_filter", True, "a seccomp filter on the grader and every process it starts refuses "
                                              "IPv4, IPv6 and packet sockets and io_uring")


def judge_protections(reported: dict[str, dict[str, Any]], own: list[Protection]) \
        -> tuple[list[Protection], list[str]]:
    """Every protection of this run (``reported``: the sandbox's, by name, as a report's environment
    holds them; then ``own``, the container's), and the names of those missing with nothing in
    their place. Raises :class:`GraderFailure` when one a Gradescope run requires is missing."""
    mine = {p.name: p for p in own}
    absent = [name for name in REQUIRED if name not in reported]
    if absent:
        raise GraderFailure("the sandbox did not report " + ", ".join(absent) + ": it cannot be shown to have run")
    found, missing = [], []
    for name, entry in sorted(reported.items()):
        protection = Protection(name, bool(entry.get("active")), str(entry.get("detail", "")))
        found.append(protection)
        if protection.active:
            continue
        if name in REQUIRED:
            raise GraderFailure(f"the sandbox could not provide {name!r} ({protection.detail})")
        substitute = mine.get(COVERED_BY.get(name, ""))
        if substitute is None or not substitute.active:
            missing.append(name)
    for name in EXPECTED:
        if name not in reported and not mine.get(COVERED_BY.get(name, ""), Protection(name, False, "")).active:
            found.append(Protection(name, False, "not reported by the sandbox, so not in place: it needs kernel "
                                                 "namespaces this container does not allow"))
            missing.append(name)
    return found + own, missing
