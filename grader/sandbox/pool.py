"""Warm workers: fork each submission's child from a process that has already imported JAX.

A fresh ``python -c "import jax"`` costs about 0.6 s of CPU before a submission does
anything; forking a process that has imported JAX (and has *never started the XLA
backend*) costs a few milliseconds, and the forked child starts its own backend in about
20 ms. Forking after the backend started deadlocks children inside XLA, so that process,
the *zygote*, is a separate, single-threaded process that only imports modules and forks:

- it is launched exactly like an ordinary child (``python -I``, the same environment
  allowlist, JAX variables and working-directory conventions), so JAX reads the same
  configuration at import as an exec'd child would;
- it refuses to serve if importing started a backend;
- each forked child gets the pipes the grading process made for it, a new process group,
  the child's own environment, working directory and stdout/stderr capture, every other
  descriptor closed, and is killed if the zygote dies; then it runs ``grader.child.entry.main()``,
  the same entry point the exec'd child runs. The judging stays in the grading process;
- a child confined to a dedicated uid (the grader runs as root) is forked into a new PID
  namespace whose init is a tiny process the zygote spawns first (``cat`` reading a pipe only
  the zygote holds). The child itself runs the submission, as the namespace's pid 2 and the
  zygote's own child: the zygote reaps it, then kills init, and the kernel kills whatever the
  submission left in the namespace. If the zygote dies, init reads the end of its pipe and
  exits, with the same effect. ``grader.child.confine`` would otherwise fork twice for the
  namespace (a relay outside it, an init inside); a fork of a process that has imported JAX
  costs about 5 ms of CPU more than spawning ``cat``.

Use :class:`Pool` as the ``launcher`` of :class:`grader.sandbox.process.ChildProcess` (through
``grader.engine.grade(..., launcher=pool.launch)``). It is thread-safe: several grading
threads share one zygote per distinct child environment. Processes forked from the grader (a
class run's grading processes, :mod:`grader.batch.processes`) share it too, each through a
channel of its own (:meth:`Pool.attach` in the grader, :meth:`Pool.adopt` in the process): the
zygote answers each channel's forks on it, tells it its children's exits, and kills the children
a channel asked for when it closes.
"""
from __future__ import annotations

import fcntl
import gc
import json
import logging
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from typing import Any

from grader.child.confine import CLONE_NEWPID, ZYGOTE_NAMESPACE
from grader.errors import PoolError, ZygoteGone
from grader.importpath import boot
from grader.sandbox.process import child_environment
from grader.sandbox.scratch import remove_tree

ZYGOTE_BOOT = "from grader.sandbox.pool import zygote_main; zygote_main()"
# What a child imports before the student's module does, and what JAX imports lazily on its
# first compilation (about 50 ms a child); importing them never starts a backend.
PRELOAD = ("grader.wire", "grader.child.entry", "numpy", "jax", "jax.numpy", "jax.sharding", "jax._src.dispatch",
           "jax._src.array", "grader.child.jaxpr_graph", "jax.experimental.multihost_utils", "jaxlib.mlir.dialects.mhlo",
           "jaxlib.mlir.dialects.builtin", "jaxlib.mlir.extras.meta",
           # the account of a full record (grader.child.account): jax.export and its serializer
           "grader.child.account", "jax.export", "jax._src.export.serialization",
           # the witness, which is forked from here too (grader.sandbox.witness)
           "grader.witness.rerun")
# Preloaded modules whose before_fork() the zygote calls once, after its imports: what every
# child would otherwise make for itself (grader.child.pins: what its Child holds on to).
BEFORE_FORK = ("grader.child.pins",)
# Variables that differ between children of one zygote; every other variable must match it.
# JAXGRADE_SANDBOX is grader.sandbox.reaper.MARKER, which names one child (for cleanup).
PER_CHILD = frozenset({"HOME", "TMPDIR", "JAXGRADE_SANDBOX"})
MAX_MESSAGE = 1 << 16
PR_SET_PDEATHSIG = 1



class ForkedProcess:
    """The part of ``subprocess.Popen`` that :class:`grader.sandbox.process.ChildProcess` uses, for a child
    forked by the zygote (which reaps it and reports how it ended)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._ended = threading.Event()

    def _end(self, returncode: int) -> None:
        if self.returncode is None:
            self.returncode = returncode
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(f"forked child {self.pid}", timeout or 0.0)
        assert self.returncode is not None
        return self.returncode


class Zygote:
    """The grading side of one warm process; ``fork`` starts a child in it."""

    def __init__(self, env: dict[str, str], startup_s: float = 60.0, channel: socket.socket | None = None) -> None:
        """Start the zygote and return at once: it imports JAX (about a second) while the
        grader goes on; the first ``fork`` waits for it to be ready. With ``channel`` (from
        :meth:`attach`, in another grading process) start nothing: fork through that channel
        from the zygote another process started."""
        self.env = {k: v for k, v in env.items() if k not in PER_CHILD}
        self.home = ""
        self.process: subprocess.Popen[bytes] | None = None
        if channel is not None:
            self._socket = channel
        else:
            self.home = tempfile.mkdtemp(prefix="jaxgrade-zygote-")
            self._socket, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-c", boot(ZYGOTE_BOOT), str(theirs.fileno())], pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.home,
                env={**self.env, "HOME": self.home, "TMPDIR": self.home, "JAXGRADE_SANDBOX": f"{os.getpid()}-zygote"},
                start_new_session=True)
            theirs.close()
        self._startup_s = startup_s
        self._greeting = threading.Lock()  # held by the first fork while it waits for the zygote
        self._reader: threading.Thread | None = None
        self._send_lock = threading.Lock()
        self._state = threading.Condition()
        self._next_id = 0
        # request id -> the child, or why the fork failed; the child itself, not its pid: it may
        # have exited (and left _children) before the thread that asked for it wakes up
        self._forked: dict[int, ForkedProcess | str] = {}
        self._children: dict[int, ForkedProcess] = {}
        self.alive = True

    def _await_ready(self) -> None:
        """Wait (once) for the zygote's greeting, then route its replies from a reader thread."""
        with self._greeting:
            if self._reader is not None:
                return
            if not self.alive:
                raise PoolError("the warm grading process has exited")
            self._socket.settimeout(self._startup_s)
            try:
                greeting = json.loads(self._socket.recv(MAX_MESSAGE) or b"{}")
            except (OSError, ValueError) as error:
                self.close()
                raise PoolError(f"the warm grading process did not start: {error}") from None
            if greeting.get("op") != "ready":
                self.close()
                raise PoolError(f"the warm grading process did not start: {greeting.get('error', 'it exited')}")
            self._socket.settimeout(None)
            self._reader = threading.Thread(target=self._read, name="jaxgrade-zygote-reader", daemon=True)
            self._reader.start()

    def _read(self) -> None:
        """Route the zygote's replies: fork results to the waiting thread, exits to their process."""
        while True:
            try:
                data = self._socket.recv(MAX_MESSAGE)
            except OSError:
                data = b""
            if not data:
                break
            message = json.loads(data)
            with self._state:
                if message["op"] == "forked":
                    pid = message.get("pid")
                    if isinstance(pid, int):
                        self._children[pid] = ForkedProcess(pid)
                    self._forked[message["id"]] = self._children[pid] if isinstance(pid, int) else str(
                        message.get("error"))
                    self._state.notify_all()
                elif message["op"] == "exited" and message["pid"] in self._children:
                    self._children.pop(message["pid"])._end(message["code"])
        with self._state:  # the zygote is gone, and with it (PDEATHSIG) every child it forked
            self.alive = False
            for child in self._children.values():
                child._end(-signal.SIGKILL)
            self._children.clear()
            self._state.notify_all()

    @property
    def exited(self) -> bool:
        """Whether it can fork no more (its reader learns of a death a moment after the process ends)."""
        return not self.alive or (self.process is not None and self.process.poll() is not None)

    def attach(self) -> socket.socket:
        """A channel of its own to this zygote for another grading process (forked from this
        one), which forks its children through it (``Zygote(env, channel=...)``) and is told
        when they exit. Its children die when that channel closes, and every child when this
        process's own channel does."""
        self._await_ready()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with self._send_lock:
                socket.send_fds(self._socket, [json.dumps({"op": "attach"}).encode()], [theirs.fileno()])
        except OSError as error:
            ours.close()
            raise ZygoteGone(f"cannot reach the warm grading process: {error}") from None
        finally:
            theirs.close()
        return ours

    def fork(self, argv: list[str], env: dict[str, str], workdir: str, fds: tuple[int, int, int],
             timeout: float = 30.0) -> ForkedProcess:
        """A new child that runs the ``python -c CODE ARGS`` of ``argv`` (the command line
        the child would have been exec'd with) on ``fds``: inbox, outbox, output."""
        if len(argv) < 4 or argv[2] != "-c":
            raise PoolError(f"a warm process can only run 'python -I -c CODE ...' children, not {argv[:3]}")
        self._await_ready()
        request = {"code": argv[3], "args": argv[4:], "numbers": list(fds[:2]), "env": env, "workdir": workdir}
        with self._state:
            if not self.alive:
                raise PoolError("the warm grading process has exited")
            self._next_id += 1
            request["id"] = ident = self._next_id
        try:
            with self._send_lock:
                socket.send_fds(self._socket, [json.dumps(request).encode()], list(fds))
        except ConnectionError as error:  # a broken pipe: it died since the check above
            self.alive = False  # (its reader may not know yet)
            raise ZygoteGone(f"cannot reach the warm grading process: {error}") from None
        except OSError as error:  # this request's own failure (too large, say): the zygote lives on
            raise PoolError(f"cannot send the request to the warm grading process: {error}") from None
        with self._state:
            if not self._state.wait_for(lambda: ident in self._forked or not self.alive, timeout):
                raise PoolError("the warm grading process did not fork in time")
            if ident not in self._forked:
                raise PoolError("the warm grading process exited")
            child = self._forked.pop(ident)
            if isinstance(child, str):
                raise PoolError(f"the warm grading process could not fork: {child}")
            return child

    def close(self) -> None:
        """Stop the zygote; it kills every child it forked that is still running."""
        self.alive = False
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self.process is None:  # another process's zygote: it kills this channel's children itself
            self._socket.close()
            return
        if self._reader is None:  # never ready, so it forked nothing: no need to wait out its imports
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self._socket.close()
        leaks = remove_tree(self.home)  # only the zygote used it: no submission runs there
        if leaks:
            logging.getLogger("jaxgrade.sandbox").error("could not remove %s: %s", self.home, "; ".join(leaks[:5]))


def _key(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """What a zygote serves: a child environment but for what differs between its children."""
    return tuple(sorted((k, v) for k, v in env.items() if k not in PER_CHILD))


class Pool:
    """Launches children by forking warm zygotes: pass ``pool.launch`` as a child launcher.

    One zygote per distinct child environment (an exercise's device count and compilation
    cache are part of it); a zygote that died is replaced on the next launch. ``most``: how
    many zygotes it keeps at once (None: every one); making one more closes the one used
    longest ago, which must have no child running (grader.warm.service grades one check at a
    time, and keeps the zygotes of the exercises checked last, not of every exercise)."""

    def __init__(self, most: int | None = None) -> None:
        self._most = most
        self._zygotes: dict[tuple[tuple[str, str], ...], Zygote] = {}
        self._lock = threading.Lock()
        self._closed = False

    def _zygote(self, env: dict[str, str]) -> Zygote:
        key = _key(env)
        with self._lock:
            if self._closed:
                raise PoolError("the pool of warm grading processes is closed")
            zygote = self._zygotes.get(key)
            if zygote is not None and zygote.exited and zygote.process is None:  # adopted: the grader's to replace
                raise PoolError("the warm grading process has exited")
            self._zygotes.pop(key, None)  # put back last: the most recently used
            if zygote is None or zygote.exited:
                if zygote is not None:
                    zygote.close()
                while self._most is not None and len(self._zygotes) >= self._most:
                    self._zygotes.pop(next(iter(self._zygotes))).close()
                zygote = Zygote(env)
            self._zygotes[key] = zygote
            return zygote

    def warm(self, devices: int, compile_cache: str | None) -> None:
        """Start the zygote for an exercise's children now (``devices`` and the compilation
        cache they will read are what their environment depends on), so that its import of
        JAX overlaps what the grader does before the first child: drawing inputs, filling the
        cache. Best effort: if it cannot start, the first launch tries again and fails where a
        submission's report can say so."""
        try:
            self._zygote(child_environment(devices, "", "", compile_cache))
        except (OSError, PoolError):  # the pool closed, or the zygote could not be spawned
            pass

    def attach(self, env: dict[str, str]) -> socket.socket:
        """A channel to the zygote of ``env`` for another grading process (:meth:`Zygote.attach`)."""
        return self._zygote(env).attach()

    def adopt(self, env: dict[str, str], channel: socket.socket) -> None:
        """Fork the children of ``env`` through ``channel`` (:meth:`attach`, in the process this
        one was forked from) rather than from a zygote of this pool's own. Should that zygote
        die (the grader interrupted, or the zygote killed), every later launch fails: the grader
        ends the run, or reports those submissions as not graded, to be graded again."""
        with self._lock:
            self._zygotes[_key(env)] = Zygote(env, channel=channel)

    def launch(self, argv: list[str], env: dict[str, str], workdir: str, fds: tuple[int, int, int]) -> ForkedProcess:
        """A :data:`grader.sandbox.process.Launcher`: the child ``argv`` describes, forked warm.

        A zygote that died before it got the request forked nothing, so a fresh one is asked
        once; a failure after that is the submission's report to give."""
        try:
            return self._zygote(env).fork(argv, env, workdir, fds)
        except ZygoteGone:
            return self._zygote(env).fork(argv, env, workdir, fds)

    def forsake(self) -> None:
        """In a process forked from the one that made this pool (a class run's grading process):
        let go of its zygotes without touching them. Only this process's copies of their channels
        are closed, so a zygote still sees its grader go; no lock (it may have been held at the fork)."""
        self._closed = True
        for zygote in self._zygotes.values():
            zygote.alive = False
            zygote._socket.close()
        self._zygotes = {}

    def close(self) -> None:
        with self._lock:
            self._closed = True
            zygotes, self._zygotes = list(self._zygotes.values()), {}
        for zygote in zygotes:
            zygote.close()

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- inside the zygote -------------------------------------------------------------------------
def zygote_main() -> None:
    """Import what children need, then fork one child per request until the grader goes away."""
    import importlib

    channel = socket.socket(fileno=int(sys.argv[1]))
    channel.set_inheritable(False)  # a namespace's init holds none of the zygote's descriptors
    before = dict(os.environ)
    try:
        for name in PRELOAD:
            importlib.import_module(name)
        # What is imported now outlives every child: out of the collector's sight, a child's
        # collections neither walk it nor write to its pages (each write copies a shared page).
        gc.freeze()
        # Then what each child would otherwise make for itself, made once here (after the
        # freeze: it stays visible to a child's collector, as in an exec'd child).
        for name in BEFORE_FORK:
            sys.modules[name].before_fork()
        from jax._src import xla_bridge
        if xla_bridge.backends_are_initialized():  # forking now would deadlock the children
            raise RuntimeError("preparing the child's modules started the XLA backend")
    except BaseException as error:
        channel.send(json.dumps({"op": "failed", "error": f"{type(error).__name__}: {error}"}).encode())
        raise SystemExit(70)
    # Variables the imports set (jaxlib sets some): an exec'd child sets them too, after its env.
    set_by_imports = {k: v for k, v in os.environ.items() if before.get(k) != v}
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    zygote = os.getpid()
    # Where the zygote goes back to after forking a child into a PID namespace of its own, and
    # the init it spawns there first (none: the child makes its namespace itself, as exec'd).
    own_pids = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC) if os.geteuid() == 0 else -1
    init_program = shutil.which("cat", path="/usr/bin:/bin")
    channel.send(json.dumps({"op": "ready", "pid": zygote}).encode())
    children: set[int] = set()
    inits: dict[int, tuple[int, int]] = {}  # a child -> its namespace's init and the pipe keeping init alive
    ending: set[int] = set()  # inits killed, not reaped yet
    # Grading processes forked from the grader fork through channels of their own (Zygote.attach):
    # each child's exit is told on the channel that asked for it.
    channels = [channel]
    asked_by: dict[int, socket.socket] = {}

    def tell(where: socket.socket, message: dict[str, Any]) -> None:
        try:
            where.send(json.dumps(message).encode())
        except OSError:  # an attached grading process that has gone: its children are being killed
            pass

    def reap() -> None:
        while children or ending:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in ending:
                ending.discard(pid)
                continue
            if pid not in children:  # an init that died before its child (which dies with it)
                for child, (init, keep_alive) in list(inits.items()):
                    if init == pid:
                        os.close(keep_alive)
                        del inits[child]
                continue
            children.discard(pid)
            if pid in inits:  # the kernel kills the rest of its namespace with init
                init, keep_alive = inits.pop(pid)
                _end_init(init, keep_alive)
                ending.add(init)
            tell(asked_by.pop(pid, channel), {"op": "exited", "pid": pid, "code": os.waitstatus_to_exitcode(status)})

    def serve(source: socket.socket) -> bool:
        """Answer one request from ``source``; False when the grader's own channel closed."""
        try:
            data, fds, _, _ = socket.recv_fds(source, MAX_MESSAGE, 3)
        except OSError:
            data, fds = b"", []
        if not data:
            if source is channel:
                return False
            channels.remove(source)  # that grading process is gone: so are the children it asked for
            for pid in [pid for pid, asker in asked_by.items() if asker is source]:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            source.close()
            return True
        request = json.loads(data)
        for fd in fds:  # the child's own, which the namespace's init must not hold
            os.set_inheritable(fd, False)
        if request.get("op") == "attach" and len(fds) == 1:
            attached = socket.socket(fileno=fds[0])
            channels.append(attached)
            tell(attached, {"op": "ready", "pid": zygote})
            return True
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            tell(source, {"op": "forked", "id": request.get("id"), "error": "expected 3 descriptors"})
            return True
        sys.stdout.flush()
        sys.stderr.flush()
        init: tuple[int, int] | None = None  # else the child makes its PID namespace itself, if it needs one
        if own_pids >= 0 and init_program and _confined_with_own_uid(request["args"]) \
                and libc.unshare(CLONE_NEWPID) == 0:
            init = _spawn_init(init_program)
            if init is None and libc.setns(own_pids, CLONE_NEWPID) != 0:
                os._exit(70)
        try:
            pid = os.fork()
        except OSError as error:
            pid = -1
            tell(source, {"op": "forked", "id": request["id"], "error": str(error)})
        if pid == 0:
            _become_child(request, fds, libc, set_by_imports, zygote, init is not None)  # never returns
        if init is not None:
            if libc.setns(own_pids, CLONE_NEWPID) != 0:  # every later child would share this namespace
                os._exit(70)
            if pid > 0:
                inits[pid] = init
            else:
                _end_init(*init)
                ending.add(init[0])
        for fd in fds:
            os.close(fd)
        if pid > 0:
            try:  # set here too, so the group exists before the grader can signal it
                os.setpgid(pid, pid)
            except OSError:
                pass
            children.add(pid)
            asked_by[pid] = source
            tell(source, {"op": "forked", "id": request["id"], "pid": pid})
        return True

    serving = True
    while serving:
        readable, _, _ = select.select([*channels, wake_r], [], [])
        if wake_r in readable:
            while True:
                try:
                    if not os.read(wake_r, 512):
                        break
                except BlockingIOError:
                    break
            reap()
        for source in readable:
            if source is not wake_r and serving:
                serving = serve(source)
    for pid in children:  # the grader went away: nothing may outlive it
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    for init, keep_alive in inits.values():
        _end_init(init, keep_alive)
    os._exit(0)


def _confined_with_own_uid(args: list[str]) -> bool:
    """Whether a child's arguments (inbox, outbox, policy) confine it to a dedicated uid: such a
    child needs a PID namespace, and root's zygote can make it (see ``zygote_main``)."""
    try:
        return len(args) > 2 and json.loads(args[2]).get("uid") is not None
    except (ValueError, AttributeError):
        return False


def _spawn_init(program: str) -> tuple[int, int] | None:
    """Start ``program`` (``cat``) as the init of the PID namespace the zygote just unshared,
    reading a pipe whose writing end only the zygote holds: it runs until the zygote ends it or
    dies. Spawned, not forked: no copy of the zygote's address space. Returns (pid, the pipe's
    writing end), or None when it could not be started."""
    keep_r, keep_alive = os.pipe()
    try:
        pid = os.posix_spawn(program, [program], {}, file_actions=[
            (os.POSIX_SPAWN_DUP2, keep_r, 0), (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)], setsid=True)
    except OSError:
        os.close(keep_alive)
        return None
    finally:
        os.close(keep_r)
    return pid, keep_alive


def _end_init(init: int, keep_alive: int) -> None:
    """End a namespace's init (the kernel then kills every process left in its namespace); the
    zygote reaps it later, like its other children."""
    os.close(keep_alive)
    try:
        os.kill(init, signal.SIGKILL)
    except OSError:
        pass


def _parent() -> int:
    """This process's parent as the grader's PID namespace numbers it (``os.getppid`` says 0
    in a new PID namespace when its parent, the zygote, is outside it; /proc is the grader's)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("PPid:"))


def _become_child(request: dict[str, Any], fds: list[int], libc: Any, set_by_imports: dict[str, str],
                  zygote: int, own_namespace: bool) -> None:
    """In the forked process: become what ``grader.sandbox.process.ChildProcess`` would have exec'd, then run
    the same ``-c`` code with the same arguments (its modules are already imported). With
    ``own_namespace`` the process is pid 2 of a new PID namespace the zygote made, and says so to
    ``grader.child.confine``."""
    code = 70
    try:
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if (_parent() if own_namespace else os.getppid()) != zygote:  # it died before the line above took effect
            os._exit(code)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        # The channel keeps the descriptor numbers the grader put on the command line; all it
        # keeps is moved out of their way first (the zygote's own pipes may hold those numbers).
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 1024) for fd in fds]
        inbox, outbox = request["numbers"]
        os.dup2(high[0], inbox)
        os.dup2(high[1], outbox)
        os.dup2(high[2], 1)
        os.dup2(high[2], 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        keep = {0, 1, 2, inbox, outbox}
        if own_namespace:
            request["env"] = {**request["env"], ZYGOTE_NAMESPACE: "1"}
        for fd in [int(name) for name in os.listdir("/proc/self/fd")]:
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        for fd in (inbox, outbox):
            os.set_inheritable(fd, True)
        os.chdir(request["workdir"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ.update(set_by_imports)
        tempfile.tempdir = None  # recomputed from the child's TMPDIR
        sys.argv = ["-c", *request["args"]]
        exec(compile(request["code"], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
