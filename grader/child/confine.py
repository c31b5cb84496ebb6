"""Confinement applied INSIDE the child, after JAX is imported and before any student code.

``confine(policy)`` is the one place where a child process gives up what a submission must
not have. It runs in the child itself, so it works the same whether the child was exec'd
fresh (``python -I -c CODE``) or forked from a warm process that imported JAX without
starting its backend. In order:

1. close every inherited file descriptor but stdio and the channel;
2. ``PR_SET_NO_NEW_PRIVS`` (no setuid binary can give privileges back);
3. namespaces, best effort: a network namespace (only a downed loopback: no network), an IPC
   namespace (System V shared memory, semaphores, message queues and POSIX queues of its own,
   gone with its last process), a PID namespace (it sees only its own processes, and when it
   ends the kernel kills every one it left) and a mount namespace in which one bounded tmpfs
   holds all the child can write (its scratch folder, and in place of each world-writable
   folder of the machine, /tmp, /var/tmp, /dev/shm, /run/lock and any other the parent found,
   an empty one of its own), the folder holding the submission's copy is
   read-only, the exercise files, other listed paths and the grader's checkout are made
   empty and unreadable, and /proc shows only the child's own processes. As root these are
   plain ``unshare``; otherwise a user namespace is tried first (where the system allows
   unprivileged ones);
4. resource limits: CPU seconds, address space, file size, no core dumps, open files, and
   (with a dedicated uid only: the limit counts per user) processes;
5. as root: drop to the dedicated unprivileged uid/gid the parent leased for this child,
   with no supplementary groups (all capabilities go with it). Directories on the way to
   the Python installation that this uid could not enter (pyenv under /root) are made
   passable inside the mount namespace, with nothing else of them visible;
   Without one (the grader is not root), Landlock where the kernel has it
   (``grader.child.landlock``): it writes only beneath its scratch (with a mount namespace, its
   private temporary folders too) and /dev/null, opens no TCP without a network namespace, and signals nothing outside its sandbox;
6. ``PR_SET_PDEATHSIG`` (the child dies with the grader), umask 077, cwd = the scratch
   folder;
7. with a PID namespace the process forks twice: it stays outside the namespace as a relay
   (the process the grader started, confined like the rest), the first fork is the
   namespace's init (reaps orphans, ignores nothing it should not), and the second runs the
   submission as an ordinary process; when the submission ends, init reports its wait status
   and exits (the kernel then kills everything else in the namespace), and the relay ends the
   same way. A child forked by ``grader.sandbox.pool``'s zygote with a dedicated uid is
   already pid 2 of a PID namespace the zygote made, whose init the zygote spawned and ends
   when this process ends (``ZYGOTE_NAMESPACE`` says so): it forks nothing and runs the
   submission itself.
   Where the grader made a control group for the child (``grader.sandbox.cgroup``),
   the submission's process joins it before dropping its uid.

A namespace that cannot be made is reported, not fatal; a limit or uid drop that fails is
fatal (``ConfinementError``): the student's code must not run with less than was asked.
Linux only; it must be called while the process is single-threaded (namespaces are
per-thread), which is why the child sets ``OPENBLAS_NUM_THREADS=1`` before importing NumPy.
"""
from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import stat
import struct
import sys
from dataclasses import asdict, dataclass
from typing import Any, NoReturn

from grader.child import landlock
from grader.child.keyrings import clear_own, fresh_session
from grader.errors import ConfinementError

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 32, 4096, 8192, 16384, 1 << 18
MS_REMOUNT_BIND_RO = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
# Set by the zygote (grader.sandbox.pool) in a child it forked into a new PID namespace whose
# init it spawned: the child is that namespace's pid 2 and runs the submission itself.
ZYGOTE_NAMESPACE = "JAXGRADE_ZYGOTE_NAMESPACE"
_CAPABILITY_VERSION_3 = 0x20080522


@dataclass(frozen=True)
class ChildLimits:
    """Of the submission's limits (``grader.sandbox.limits.Limits.in_child``), those the child
    applies to itself: CPU seconds, memory, file size and scratch space."""
    cpu_s: int
    memory_mib: int
    file_mib: int
    scratch_mib: int
    scratch_files: int


@dataclass(frozen=True)
class Policy:
    """What the child gives up. Built by the parent (``grader.sandbox.process``), sent as JSON.

    ``workdir``: the folder holding the submission's copy (read-only to the child where it has
    a mount namespace); ``scratch``: the folder inside it where the child works (cwd, HOME,
    TMPDIR), with its private /tmp, /var/tmp and /dev/shm one tmpfs of ``limits.scratch_mib``
    MiB and ``limits.scratch_files`` inodes in all.
    ``uid``/``gid``: the dedicated unprivileged identity to drop to when running as root
    (None: keep the current one). ``limits``: what the child applies to itself of the
    submission's limits. ``hide``: paths made empty and unreadable when a mount
    namespace can be made (the exercise with its reference, other submissions, the grader's
    checkout, a class run's output).
    ``reach``: paths the child must still be able to read after dropping privileges.
    ``read_only``: paths the child may read but never write, even as the grader's own user
    (the shared compilation cache: a submission must not plant programs for the next).
    ``cgroups``: control-group folders (one per hierarchy) the submission's process joins.
    ``temporaries``: the machine's world-writable folders (``grader.sandbox.world_writable``),
    each replaced by an empty folder of the scratch tmpfs; () means PRIVATE_TEMPORARIES."""
    workdir: str
    limits: ChildLimits
    scratch: str = ""
    keep_fds: tuple[int, ...] = ()
    uid: int | None = None
    gid: int | None = None
    open_files: int = 512
    processes: int = 0  # 0: 128 + 4 per CPU (XLA starts thread pools sized by the CPU count)
    isolate_network: bool = True
    hide: tuple[str, ...] = ()
    reach: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    cgroups: tuple[str, ...] = ()
    temporaries: tuple[str, ...] = ()

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "Policy":
        data = json.loads(text)
        for key in ("keep_fds", "hide", "reach", "read_only", "cgroups", "temporaries"):
            data[key] = tuple(data.get(key, ()))
        data["limits"] = ChildLimits(**data["limits"])
        return cls(**data)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(libc: ctypes.CDLL, source: str | None, target: str, fstype: str | None, flags: int,
           data: str | None = None) -> None:
    encode = lambda s: s.encode() if s is not None else None  # noqa: E731
    _call(libc.mount(encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(data)),
          f"mount {target}")


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def close_inherited_fds(keep: set[int]) -> int:
    """Close every descriptor not in ``keep`` (a forked child inherits its parent's pipes to
    other children and files; an exec'd one only what was passed). Returns how many."""
    try:
        open_fds = sorted(int(name) for name in os.listdir("/proc/self/fd"))
    except OSError:
        open_fds = list(range(3, 1024))
    closed = 0
    for fd in open_fds:
        if fd in keep:
            continue
        try:
            os.close(fd)
            closed += 1
        except OSError:
            pass
    return closed


def _unshare(libc: ctypes.CDLL, flags: int) -> None:
    _call(libc.unshare(ctypes.c_int(flags)), "unshare")


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


@dataclass
class Namespaces:
    """Which namespaces ``_enter_namespaces`` made, and why not the others."""
    network: bool = False
    mounts: bool = False
    separate: bool = False  # its own IPC and PID namespaces (the PID one holds its future children)
    why: str = ""


def _enter_namespaces(libc: ctypes.CDLL, policy: Policy, root: bool, in_pid_namespace: bool) -> Namespaces:
    """Best effort, never raises: the IPC and PID namespaces with the others where the kernel
    allows them all, else the mount and network ones alone, else the network one alone. With
    ``in_pid_namespace`` the process is already in a PID namespace of its own: no new one is made."""
    wanted = CLONE_NEWNS | (CLONE_NEWNET if policy.isolate_network else 0)
    if _threads() > 1:
        return Namespaces(why=f"the process already runs {_threads()} threads (namespaces are per-thread)")
    why = ""
    separate_ones = CLONE_NEWIPC | (0 if in_pid_namespace else CLONE_NEWPID)
    for flags, separate in ((wanted | separate_ones, True), (wanted, False)):
        try:
            if root:
                _unshare(libc, flags)
            else:
                uid, gid = os.getuid(), os.getgid()
                _unshare(libc, CLONE_NEWUSER | flags)
                _write("/proc/self/setgroups", "deny")
                _write("/proc/self/uid_map", f"{uid} {uid} 1")
                _write("/proc/self/gid_map", f"{gid} {gid} 1")
            return Namespaces(policy.isolate_network, True, separate, why)
        except OSError as error:
            why = why or (str(error) if root else f"no user namespaces for unprivileged users here ({error})")
    # Fall back to the network namespace alone (some containers forbid mount namespaces).
    if policy.isolate_network and root:
        try:
            _unshare(libc, CLONE_NEWNET)
            return Namespaces(network=True, why=why)
        except OSError as error:
            why = f"{why}; {error}"
    return Namespaces(why=why)


def _other_can_enter(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return True  # nothing to make passable
    return bool(mode & stat.S_IXOTH)


def _make_passable(libc: ctypes.CDLL, reach: tuple[str, ...]) -> list[str]:
    """For each directory on the way to a path in ``reach`` that others may not enter (for
    example /root, mode 0700, holding a pyenv Python), put a tmpfs over it that holds only
    the next step of the way, bind-mounted back. Only the mount namespace sees this."""
    opened: list[str] = []
    for _ in range(16):  # each round opens one blocking directory; nesting is shallow
        blocked: dict[str, set[str]] = {}
        for target in reach:
            parts = os.path.realpath(target).strip("/").split("/")
            for depth in range(1, len(parts)):
                directory = "/" + "/".join(parts[:depth])
                if not _other_can_enter(directory):
                    blocked.setdefault(directory, set()).add(parts[depth])
                    break
        if not blocked:
            return opened
        directory, children = next(iter(blocked.items()))
        # Held by descriptors while the tmpfs covers their paths, then bound back from them
        # (no staging folder, no unmount: an unmount waits for an RCU grace period, ~5 ms).
        held = {name: os.open(os.path.join(directory, name), os.O_PATH | os.O_CLOEXEC) for name in sorted(children)}
        try:
            _mount(libc, "tmpfs", directory, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")
            for name, fd in held.items():
                place = os.path.join(directory, name)
                os.mkdir(place) if os.path.isdir(f"/proc/self/fd/{fd}") else open(place, "w").close()
                _mount(libc, f"/proc/self/fd/{fd}", place, None, MS_BIND | MS_REC)
        finally:
            for fd in held.values():
                os.close(fd)
        _mount(libc, None, directory, None, MS_REMOUNT_BIND_RO)
        opened.append(directory)
    raise ConfinementError("too many nested directories to make passable: " + ", ".join(reach))


def _hide(libc: ctypes.CDLL, paths: tuple[str, ...]) -> list[str]:
    """Make each of ``paths`` empty and unreadable in this mount namespace: a folder is covered by
    one empty read-only tmpfs (made once, bound over the others), a file by /dev/null on a mount
    where devices cannot be opened. Ancestors come first, so what they cover is skipped."""
    hidden: list[str] = []
    empty = ""
    for path in sorted(paths, key=len):
        if os.path.islink(path):
            continue  # covering a link would cover what it points to
        if os.path.isdir(path):
            if not empty:
                _mount(libc, "tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                       "mode=0555,size=4k,nr_inodes=2")
                empty = path
            else:
                _mount(libc, empty, path, None, MS_BIND)
        elif os.path.isfile(path):
            _mount(libc, "/dev/null", path, None, MS_BIND)
            _mount(libc, None, path, None, MS_REMOUNT_BIND_RO | MS_NOEXEC)
        else:
            continue
        hidden.append(path)
    return hidden


# The machine's temporary directories, each replaced by a folder of the child's scratch tmpfs
# (with every other world-writable folder the parent found: ``Policy.temporaries``).
PRIVATE_TEMPORARIES = (("/tmp", "tmp"), ("/var/tmp", "var-tmp"), ("/dev/shm", "shm"))


def _temporaries(policy: Policy) -> list[tuple[str, str]]:
    """(folder, name of its replacement in the scratch tmpfs): the usual three under their own
    names, each other world-writable folder as ``ww-N``."""
    named = dict(PRIVATE_TEMPORARIES)
    found = [*named, *(f for f in policy.temporaries if f not in named)]
    return [(folder, named.get(folder, f"ww-{number}")) for number, folder in enumerate(found)]


def _scratch_space(libc: ctypes.CDLL, policy: Policy, keep: tuple[str, ...]) -> list[str]:
    """One tmpfs of ``scratch_mib`` MiB and ``scratch_files`` inodes holds everything the child
    can write: its scratch folder and its private, empty /tmp, /var/tmp, /dev/shm and other
    world-writable folders, folders ``work``, ``tmp``, ``var-tmp``, ``shm`` and ``ww-N`` of it. So a submission can fill neither the
    grader's disk nor more memory than that, sees no other child's files, and what it wrote
    vanishes with its mount namespace. The tmpfs is mounted on the scratch folder, then its
    ``work`` folder is bound on top: its root, under that, is reached by nothing. Returns the
    temporary directories replaced."""
    scratch = policy.scratch or policy.workdir
    _mount(libc, "tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV,
           f"mode=0755,size={policy.limits.scratch_mib}m,nr_inodes={policy.limits.scratch_files}")
    # Binding over the scratch folder and /tmp changes what paths name: reach the root by a descriptor.
    mounted = os.open(scratch, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    root = f"/proc/self/fd/{mounted}"
    umask = os.umask(0o022)  # the folders on the way back to the working folder: passable for the uid
    try:
        os.mkdir(f"{root}/work", 0o700)
        _mount(libc, f"{root}/work", scratch, None, MS_BIND)
        kept = sorted({os.path.realpath(k) for k in keep})
        return [directory for directory, name in _temporaries(policy)
                if _replace_temporary(libc, directory, f"{root}/{name}", kept)]
    finally:
        os.umask(umask)
        os.close(mounted)


def _replace_temporary(libc: ctypes.CDLL, directory: str, area: str, kept: list[str]) -> bool:
    """Cover ``directory`` with ``area`` (a new folder of the scratch tmpfs), after binding back
    into it every path of ``kept`` that lies inside ``directory`` (the working folder, the
    Python installation or the cache may live in /tmp or /var/tmp)."""
    if not os.path.isdir(directory) or (directory != "/tmp" and os.path.islink(directory)):
        return False  # a /var/tmp that links to /tmp is covered with /tmp
    real = os.path.realpath(directory)
    os.mkdir(area)
    os.chmod(area, 0o1777)
    inside = [k for k in kept if k.startswith(real + "/")]
    for path in inside:
        if any(path.startswith(other + "/") for other in inside):
            continue  # bound with its ancestor
        place = area + path[len(real):]
        if os.path.isdir(path):
            os.makedirs(place, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(place), exist_ok=True)
            open(place, "w").close()
        _mount(libc, path, place, None, MS_BIND | MS_REC)  # with what is mounted inside: the scratch folder
    _mount(libc, area, real, None, MS_BIND | MS_REC)
    return True


def _read_only_workdir(libc: ctypes.CDLL, workdir: str) -> None:
    """The folder holding the submission's copy, where the child sees it now, read-only: the
    grader still writes the copy there (through its own mount), the child can only work in its
    scratch folder (bound inside, and still writable)."""
    _mount(libc, workdir, workdir, None, MS_BIND | MS_REC)
    _mount(libc, None, workdir, None, MS_REMOUNT_BIND_RO)


def _kernel_version(release: str) -> tuple[int, int]:
    """(major, minor) of a kernel release such as "6.1.0-18-amd64"; (0, 0) if unreadable."""
    parts = release.split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        return 0, 0


def _private_proc(libc: ctypes.CDLL) -> str:
    """A /proc of this mount namespace's own that shows only the processes of the child's own
    user (hidepid): after the uid drop, the grader's command line, its arguments and every other
    process are invisible. Returns why not, or "". Before Linux 5.8 every /proc of a pid
    namespace shares one set of options: hidepid here would change the machine's own /proc."""
    release = os.uname().release
    if _kernel_version(release) < (5, 8):
        return f"Linux {release} shares the options of /proc with the whole machine (5.8 or later needed)"
    try:
        _mount(libc, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
    except OSError as error:  # a mount of proc needs rights over the process's pid namespace
        return str(error)
    return ""


def _bind_read_only(libc: ctypes.CDLL, paths: tuple[str, ...]) -> list[str]:
    done = []
    for path in paths:
        if os.path.isdir(path):
            _mount(libc, path, path, None, MS_BIND | MS_REC)
            _mount(libc, None, path, None, MS_REMOUNT_BIND_RO)
            done.append(path)
    return done


def process_limit(asked: int = 0) -> int:
    """Processes and threads a child may run: ``asked``, or by default 128 + 4 per CPU (XLA
    starts thread pools sized by the CPU count). The uid's RLIMIT_NPROC and the cgroup's pids."""
    return asked or 128 + 4 * (os.cpu_count() or 1)


def _processes(policy: Policy) -> int:
    return process_limit(policy.processes)


def _set_limits(policy: Policy, dedicated_uid: bool) -> str:
    limits = policy.limits
    rlimits = [(resource.RLIMIT_CORE, 0, 0),
               (resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 2),  # SIGXCPU, then SIGKILL
               (resource.RLIMIT_AS, limits.memory_mib << 20, limits.memory_mib << 20),
               (resource.RLIMIT_FSIZE, limits.file_mib << 20, limits.file_mib << 20),
               (resource.RLIMIT_NOFILE, policy.open_files, policy.open_files)]
    if dedicated_uid:  # RLIMIT_NPROC counts every process of the user: only sound for our own uid
        rlimits.append((resource.RLIMIT_NPROC, _processes(policy), _processes(policy)))
    for which, soft, hard in rlimits:
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY and hard > current_hard:
            soft, hard = min(soft, current_hard), current_hard  # never raise a limit we were given
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError) as error:
            raise ConfinementError(f"could not set resource limit {which}: {error}") from None
    text = (f"CPU {limits.cpu_s} s, memory {limits.memory_mib} MiB, files up to {limits.file_mib} MiB, "
            f"{policy.open_files} open files, no core dumps")
    return text + (f", {_processes(policy)} processes and threads" if dedicated_uid else "")


def _drop_capabilities(libc: ctypes.CDLL) -> None:
    """Inside a user namespace the process holds every capability over it (it could undo the
    mounts that hide files); give them all up."""
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _call(libc.capset(header, data), "capset")


def _drop_uid(policy: Policy) -> None:
    gid = policy.gid if policy.gid is not None else policy.uid
    try:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(policy.uid, policy.uid, policy.uid)
    except OSError as error:
        raise ConfinementError(f"could not drop to uid {policy.uid}: {error}") from None
    if os.geteuid() == 0 or os.getegid() == 0 or os.getgroups():
        raise ConfinementError("still privileged after dropping the uid")


def _fresh_keyrings(dropping: bool) -> str:
    """After the uid drop: join a new session keyring (the one inherited is the grader's), and
    with a sandbox uid empty its own keyrings (what an earlier child of the uid may have left);
    why that could not be done, or ""."""
    try:
        fresh_session()
    except OSError as error:
        return f"keyctl(KEYCTL_JOIN_SESSION_KEYRING) failed: {error.strerror}"
    return "; ".join(clear_own()) if dropping else ""


def _join_cgroups(policy: Policy) -> None:
    """Be in the control groups the grader made for this child (what it starts follows): the
    grader moves the child in as it starts (``ChildGroup.add``); a fork before that joins here."""
    for folder in policy.cgroups:
        procs = os.path.join(folder, "cgroup.procs")
        try:
            with open(procs) as members:  # pids as this PID namespace numbers them
                if str(os.getpid()) in members.read().split():
                    continue
            _write(procs, "0")
        except OSError as error:
            raise ConfinementError(f"could not join the control group {folder}: {error}") from None


def _end_as(wait_status: int) -> NoReturn:
    """End this process the way another one ended (its exit code, or its signal)."""
    if os.WIFSIGNALED(wait_status):
        number = os.WTERMSIG(wait_status)
        try:
            signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # SIGKILL and SIGSTOP cannot be caught anyway
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.waitstatus_to_exitcode(wait_status))


def _in_zygote_namespace() -> bool:
    """Whether the zygote forked this process into a PID namespace it made (as its pid 2, after
    the init it spawned); the variable goes, the submission never sees it."""
    return os.environ.pop(ZYGOTE_NAMESPACE, "") == "1" and os.getpid() == 2


def _split_pid_namespace(policy: Policy, give_up: Any) -> None:
    """Fork into the new PID namespace (see step 7 of the module's docstring); returns only in
    the process that goes on to run the submission. The relay and init hold no descriptor of
    the channel, so the grader sees the channel close when the submission's process ends."""
    _call(_libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() == 1:  # the grader died before the line above took effect
        os._exit(70)
    status_r, status_w = os.pipe()
    init = os.fork()
    if init:
        os.close(status_w)
        _stand_by(policy, give_up, lambda: _relay(init, status_r), init)
    os.close(status_r)
    _call(_libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    submission = os.fork()
    if submission:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # no KeyboardInterrupt in init: it runs no Python of note
        _stand_by(policy, give_up, lambda: _init(submission, status_w), submission)
    os.close(status_w)


def _stand_by(policy: Policy, give_up: Any, wait: Any, other: int) -> NoReturn:
    """The relay and init: give up the channel and every privilege (``give_up``), then wait;
    never return."""
    try:
        for fd in policy.keep_fds:
            os.close(fd)
        try:  # in the child's control group, the kernel's OOM kill must pick what the submission runs
            _write("/proc/self/oom_score_adj", "-1000")
        except OSError:
            pass  # lowering it needs privilege (a user namespace has none over it)
        give_up()
        os.umask(0o077)
        os.chdir(policy.scratch or policy.workdir)
        wait()
    except BaseException:  # never run the submission here, and print nothing (the output is the student's)
        try:
            os.kill(other, signal.SIGKILL)
        except OSError:
            pass
    os._exit(70)


def _relay(init: int, status_r: int) -> NoReturn:
    """Outside the namespace: wait for init, then end as the submission's process ended (init
    reports its wait status; if init itself was killed, as init ended)."""
    data = b""
    while len(data) < 4 and (chunk := os.read(status_r, 4 - len(data))):
        data += chunk
    _, init_status = os.waitpid(init, 0)
    _end_as(struct.unpack("i", data)[0] if len(data) == 4 else init_status)


def _init(submission: int, status_w: int) -> NoReturn:
    """The namespace's init: reap whatever is orphaned to it until the submission's process
    ends, report that one's wait status and exit (the kernel then kills the rest)."""
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(0)
        if pid == submission:
            try:
                os.write(status_w, struct.pack("i", status))
            except OSError:
                pass  # the relay is gone (the submission may kill it: it runs as the same uid)
            os._exit(0)


def confine(policy: Policy) -> dict[str, dict[str, Any]]:
    """Confine this process as ``policy`` says; return which protections are active, as
    {name: {"active": bool, "detail": str}} for the report's environment. With a PID namespace
    this returns in the submission's process only (step 7 of the module's docstring)."""
    root = os.geteuid() == 0
    protections: dict[str, dict[str, Any]] = {}

    def note(name: str, active: bool, detail: str) -> None:
        protections[name] = {"active": active, "detail": detail}

    if not available():  # limits only: no prctl, namespaces or /proc here
        note("limits", True, _set_limits(policy, False))
        note("confinement", False, f"{sys.platform} is not Linux: no uid drop, namespaces or hidden paths")
        os.umask(0o077)
        os.chdir(policy.scratch or policy.workdir)
        return protections
    libc = _libc()
    in_zygote_namespace = _in_zygote_namespace()

    close_inherited_fds({0, 1, 2, *policy.keep_fds})
    note("descriptors", True, "every inherited descriptor but the channel and stdout/stderr closed; "
                              "stdin is /dev/null")
    _call(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")

    here = (sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__), *sys.path)
    reach = tuple(p for p in (*policy.reach, *policy.read_only, *here) if p and os.path.exists(p))
    spaces = _enter_namespaces(libc, policy, root, in_zygote_namespace)
    own_pids = spaces.separate or in_zygote_namespace  # a PID namespace of its own
    mounts, why = spaces.mounts, spaces.why
    if policy.isolate_network:
        note("network", spaces.network, "own network namespace: no interface but a downed loopback"
             if spaces.network else f"the network is reachable: {why}")
    hidden: list[str] = []
    scratch = policy.scratch or policy.workdir
    if mounts:
        _call(libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None), "mount --make-rprivate /")
        replaced = _scratch_space(libc, policy, (policy.workdir, *reach))
        note("scratch", True, f"one private tmpfs of {policy.limits.scratch_mib} MiB and "
                              f"{policy.limits.scratch_files} files holds all it can write: its working folder "
                              f"and {', '.join(replaced)} (empty, its own); gone with the child")
        _read_only_workdir(libc, policy.workdir)
        hidden = _hide(libc, policy.hide)
        frozen = _bind_read_only(libc, policy.read_only)
        if policy.read_only:
            note("read_only", bool(frozen), "mounted read-only: " + ", ".join(frozen))
    elif policy.read_only:
        note("read_only", root and policy.uid is not None,
             "owned by the grader, not writable by the sandbox uid" if root and policy.uid is not None
             else f"writable by the submission: {', '.join(policy.read_only)} ({why})")
    dropping = root and policy.uid is not None
    if dropping:
        if mounts:
            _make_passable(libc, reach)
        os.chown(scratch, policy.uid, policy.gid if policy.gid is not None else policy.uid)
    note("temporary_files", mounts, f"its own empty {', '.join(replaced)} (in its scratch tmpfs): it sees no other "
                                   "process's temporary files, and what it leaves there goes with it" if mounts
         else f"/tmp, /var/tmp, /dev/shm and the machine's other world-writable folders are shared with the grader "
              f"and other users ({why})" + ("; what its uid leaves there is removed when it ends" if dropping else ""))
    note("hidden_paths", bool(hidden), ("made empty and unreadable: " + ", ".join(hidden)) if hidden
         else f"readable by the submission where file permissions allow: {', '.join(policy.hide) or 'none'}"
              + (f" ({why})" if why and not mounts else ""))
    note("ipc", spaces.separate, "its own IPC namespace: System V shared memory, semaphores and message queues "
                                 "and POSIX message queues of its own, gone with its last process" if spaces.separate
         else "System V IPC objects and POSIX message queues are the machine's" + (
             ": the grader removes those of the child's uid when it ends" if dropping else
             ", and what it leaves there outlives it") + f" ({why or 'no IPC namespace'})")

    note("limits", True, _set_limits(policy, dropping))
    if own_pids and not in_zygote_namespace:  # the relay and init drop the uid, or a user namespace's capabilities
        _split_pid_namespace(policy, lambda: _drop_uid(policy) if dropping else
                             _drop_capabilities(libc) if mounts and not root else None)
    _join_cgroups(policy)
    proc_why = _private_proc(libc) if mounts else why or "no mount namespace"
    if own_pids:
        note("processes", not proc_why, "its own PID namespace and /proc: it sees only its own processes (not the "
                                        "grader's, its command line or any other child's), and whatever it leaves "
                                        "running is killed when it ends" if not proc_why else
             f"its own PID namespace, but /proc shows the machine's processes ({proc_why})")
    else:
        note("processes", dropping and not proc_why,
             "its own /proc shows only its own processes: not the grader's, its command line or any other"
             if dropping and not proc_why else
             "other processes are visible in /proc, the grader's command line included"
             + (f" ({proc_why})" if proc_why else " (the child runs as the grader's own user)"))

    if dropping:
        _drop_uid(policy)
        needed = [p for p in reach if p not in policy.read_only]  # an unreadable cache only costs speed
        unreadable = [p for p in needed if not os.access(p, os.R_OK | os.X_OK if os.path.isdir(p) else os.R_OK)]
        if unreadable:  # later imports (the submission's, JAX's lazy ones) would fail in confusing ways
            raise ConfinementError(f"the sandbox uid cannot read {', '.join(unreadable)}: install Python, the "
                                   "grader and the cache where every user may read them, or allow mount namespaces")
        note("user", True, "runs as a dedicated unprivileged uid (one per child) with no capabilities; "
                           "it cannot write the grader's, the exercise's or other submissions' files")
    else:
        # Landlock after every mount: what the grader's own user could write stays unwritten. The
        # temporary folders are its scratch's where it has a mount namespace, else the machine's
        writable = (scratch, *(folder for folder, _ in _temporaries(policy) if mounts), os.devnull)
        walled, walls = landlock.restrict(writable, policy.isolate_network and not spaces.network)
        note("landlock", walled, walls)
        if mounts and not root:
            try:
                _drop_capabilities(libc)
            except OSError as error:
                raise ConfinementError(f"could not drop the user namespace's capabilities: {error}") from None
        note("user", False, ("runs as the grader's own user (the grader is not root): " + (
            "Landlock keeps it from writing that user's files" if walled else "it can write whatever that user can "
            "write")) if not root else "stays root (no uid was given)")
    keyring_why = _fresh_keyrings(dropping)
    note("keyrings", not keyring_why, f"it may reach keyrings it should not: {keyring_why}" if keyring_why else
         "its own new session keyring (not the grader's)" + (
             "; its uid's user, user-session and persistent keyrings emptied before it runs and after it ends"
             if dropping else "; its user keyring is the grader's user's"))
    _call(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() == 1 and (in_zygote_namespace or not own_pids):  # the grader died before the line above
        os._exit(70)  # took effect (the submission's parent is the zygote, outside the namespace: 0), or the
    # PID namespace is the child's own: its parent is init, pid 1, whose death ends the namespace
    os.umask(0o077)
    os.chdir(scratch)
    return protections


def available() -> bool:
    """Whether this platform can confine a child at all (Linux with prctl/unshare)."""
    return sys.platform.startswith("linux")
