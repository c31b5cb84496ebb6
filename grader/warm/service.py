"""The warm grading service: one per user (and per grader code, interpreter and environment,
grader.warm.place), started in the background by a ``jaxgrade check`` or a notebook's
``grader.check()`` that found none.

What it holds warm is the grading parent's half of a check (the grader's modules, Hypothesis,
Jinja2 and its compiled templates) and a zygote (grader.sandbox.pool) that has imported JAX.
A CLI check (kind "check") is ``grader.cli.main`` run here with the client's arguments,
working folder and umask, its stdout and stderr captured as the bytes the client's own streams
would have got (their encoding, and whether they are terminals); a notebook check (kind
"cells", grader.notebook.warm_cells) is the kernel's cells graded as the kernel grades them, in the
kernel's working folder and umask, the report sent back as data. Either way the child is
launched by forking the zygote: every check gets a fresh sandboxed child that ran nothing before it, with the same ``hide`` as
an in-process check, so one check never sees another's files and no student code ever runs in
this process (it reads the file, as the CLI's parent does, and judges what the child sends).

Its life: it takes a lock (a second service for the same socket exits at once), waits for the
check that started it to exit (so that check is not slowed; a kernel starts it once its own
check is done, and it waits for nothing), imports, grades that check's file
once with its output discarded (the zygote started, every lazy import and template made), and
only then listens. It serves one check at a time; a client that closes its end mid-check
(Ctrl-C, an interrupted kernel) interrupts that check as Ctrl-C would. It exits after ``JAXGRADE_DAEMON_IDLE_S``
without a check, when its code changes on disk (an upgrade, an edited checkout), when its
socket is removed, or on SIGTERM; its zygote and children die with it (PDEATHSIG, the zygote's
closed channel). ``warm-NAME.log`` beside the socket says when it became ready, each check it
served and why it stopped; ``warm-NAME.pid`` holds its pid while it runs.
"""
from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import signal
import socket
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Iterator, TextIO

from grader.errors import WarmServiceError
from grader.sandbox.reaper import wait_for_exit
from grader.notebook import warm_cells
from grader.warm import frames, place

TICK_S = 5.0  # how often an idle service looks at the clock, its code and its socket
WAIT_FOR_STARTER_S = 120.0
ZYGOTES = 2  # zygotes kept (each a process that imported JAX, ~0.2 GB): the exercises checked last


class CapturedStream(io.TextIOBase):
    """A client's stdout or stderr as the CLI sees it: its encoding and error handler, whether it
    is a terminal (colour); what is written becomes that stream's bytes, in order."""

    def __init__(self, tag: bytes, shape: dict[str, Any], written: list[tuple[bytes, bytes]]) -> None:
        super().__init__()
        self._tag, self._written = tag, written
        self._encoding = str(shape.get("encoding") or "utf-8")
        self._errors = str(shape.get("errors") or "strict")
        self._tty = bool(shape.get("tty"))
        "".encode(self._encoding, self._errors)  # an unknown codec: LookupError, the request refused

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding

    @property
    def errors(self) -> str:  # type: ignore[override]
        return self._errors

    def isatty(self) -> bool:
        return self._tty

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        data = text.encode(self._encoding, self._errors)
        if self._written and self._written[-1][0] == self._tag:
            self._written[-1] = (self._tag, self._written[-1][1] + data)
        elif data:
            self._written.append((self._tag, data))
        return len(text)


class Service:
    def __init__(self, folder: Path, name: str) -> None:
        self.folder, self.name = folder, name
        self.address = place.socket_path(folder, name)
        self.environment = place.relevant_environment(os.environ)  # before any import can change it
        self.stamp = place.code_stamp(place.search_path())
        self.idle_s = place.idle_seconds(os.environ)
        self.log = open(os.open(folder / f"warm-{name}.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                                0o600), "a", buffering=1)  # (its lines name the files checked)
        self.pid_file = folder / f"warm-{name}.pid"
        self.pool: Any = None
        self._serving = False
        self._lock = threading.Lock()

    def say(self, line: str) -> None:
        self.log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid={os.getpid()} {line}\n")

    def warm_up(self, first: dict[str, Any]) -> None:
        """Import what a check needs and grade the starting check's file once, its output
        discarded (-o and CI summaries left out), through the zygote, so that the next check
        finds everything made. Best effort: the service serves anyway."""
        from grader import cli  # noqa: F401 (the parent's imports, made now)
        from grader.authoring.course import choose_course
        from grader.authoring.exercise import keep_loaded
        keep_loaded()  # a check reuses the exercise's checks, drawn inputs and answers, as a class run does
        from grader.sandbox.pool import Pool
        from grader.submission import grade, read_submission
        self.pool = Pool(most=ZYGOTES)
        try:
            arguments, course, keys = cli.course_option(first["argv"])
            args = cli.build_parser(command="check").parse_args(arguments)
            os.chdir(first["cwd"])
            choose_course(course, keys)  # relative to the check's folder
            exercise = cli.exercise_for(args, read_submission(Path(args.file), args.file))
            report = grade(exercise, Path(args.file), display_path=args.file, launcher=self.pool.launch)
            from grader.report.render import deliver
            for colour in (False, True):
                deliver(report, "text", io.StringIO(), colour=colour)
            self.say(f"warmed on {exercise.slug}")
        except BaseException as error:  # noqa: BLE001 (a usage error, a missing file: nothing to warm)
            if isinstance(error, KeyboardInterrupt):
                raise
            self.say(f"not warmed: {type(error).__name__}: {error}")
        finally:
            choose_course(None)
            os.chdir("/")

    def serve(self, listener: socket.socket) -> str:
        """Answer checks until idle or stale; why it stopped."""
        inode = os.stat(self.address).st_ino
        last = time.monotonic()
        while True:
            left = self.idle_s - (time.monotonic() - last)
            if left <= 0:
                return "idle"
            if place.code_stamp(place.search_path()) != self.stamp:
                return "the grader's code changed"
            try:
                if os.stat(self.address).st_ino != inode:
                    return "the socket was replaced"
            except OSError:
                return "the socket was removed"
            listener.settimeout(min(TICK_S, left))
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            try:
                with connection:
                    self.answer(connection)
            except (OSError, WarmServiceError, ValueError, KeyboardInterrupt) as error:
                self.say(f"check not answered: {type(error).__name__}: {error}")
            last = time.monotonic()

    def answer(self, connection: socket.socket) -> None:
        if frames.peer_uid(connection) != os.geteuid():
            self.say("refused a client of another user")
            return
        connection.settimeout(5.0)
        tag, body = frames.receive(connection, frames.MAX_REQUEST)
        request = _parsed(body)
        if tag != frames.REQUEST or not isinstance(request, dict) or request.get("protocol") != frames.PROTOCOL \
                or request.get("key") != self.name or request.get("env") != self.environment:
            frames.send(connection, frames.REFUSED)
            self.say("refused a request that does not match this service")
        elif request.get("kind") == warm_cells.KIND:
            self._answer_cells(connection, request)
        elif request.get("kind") == "check" and isinstance(request.get("argv"), list) \
                and all(isinstance(a, str) for a in request["argv"]) \
                and request["argv"][:1] == ["check"]:  # only checks: the other commands are no service's
            self._answer_check(connection, request)
        else:
            frames.send(connection, frames.REFUSED)
            self.say("refused a request of no kind this service answers")

    def _answer_check(self, connection: socket.socket, request: dict[str, Any]) -> None:
        started = time.monotonic()
        written: list[tuple[bytes, bytes]] = []
        try:
            streams = (CapturedStream(frames.STDOUT, request["stdout"], written),
                       CapturedStream(frames.STDERR, request["stderr"], written))
            os.chdir(request["cwd"])
            umask = request.get("umask")
            previous_umask = os.umask(umask if isinstance(umask, int) else 0o022)
        except (OSError, LookupError, TypeError, KeyError):
            frames.send(connection, frames.REFUSED)
            return
        try:
            frames.send(connection, frames.ACCEPTED)
            connection.settimeout(60.0)
            code = self._check(connection, request["argv"], streams)
        finally:
            os.umask(previous_umask)
            os.chdir("/")
        for tag, data in written:
            frames.send(connection, tag, data)
        frames.send(connection, frames.EXIT, json.dumps(code).encode())
        self.say(f"served code={code} seconds={time.monotonic() - started:.3f} argv={request['argv']}")

    def _answer_cells(self, connection: socket.socket, request: dict[str, Any]) -> None:
        """A notebook check (grader.notebook.warm_cells): its report as data, or REFUSED (a request out of
        bounds, a grading that failed: the kernel grades the cells itself and says why)."""
        started = time.monotonic()
        from grader.authoring.exercise import all_exercises
        try:
            check = warm_cells.read(request, frozenset(e.slug for e in all_exercises()))
            os.chdir(check.cwd)
        except (ValueError, OSError) as error:
            frames.send(connection, frames.REFUSED)
            self.say(f"refused a notebook check: {error}")
            return
        previous_umask = os.umask(check.umask)
        try:
            frames.send(connection, frames.ACCEPTED)
            connection.settimeout(60.0)
            with self._watched(connection):
                report = warm_cells.grade(check, self.pool.launch)
            body = json.dumps(report.as_data()).encode()
        except Exception as error:  # noqa: BLE001 (a bug, an exercise that fails to load: the kernel meets it too)
            frames.send(connection, frames.REFUSED)
            self.say(f"notebook check not graded: {type(error).__name__}: {error}")
            return
        finally:
            os.umask(previous_umask)
            os.chdir("/")
        frames.send(connection, frames.REPORT, body)
        self.say(f"served cells exercise={check.exercise} status={report.status} "
                 f"seconds={time.monotonic() - started:.3f}")

    def _check(self, connection: socket.socket, argv: list[str], streams: tuple[TextIO, TextIO]) -> int:
        """``jaxgrade check ARGV`` as the CLI runs it, the child forked from the zygote."""
        from grader import cli
        saved = sys.stdout, sys.stderr
        try:
            with self._watched(connection):
                sys.stdout, sys.stderr = streams
                try:
                    code = cli.main(argv, launcher=self.pool.launch)
                finally:
                    sys.stdout, sys.stderr = saved
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        except KeyboardInterrupt:
            code = 130
        return int(code)

    @contextlib.contextmanager
    def _watched(self, connection: socket.socket) -> Iterator[None]:
        """While the block runs, a client gone (Ctrl-C, an interrupted kernel) interrupts it:
        SIGINT to this process, KeyboardInterrupt in the block, as Ctrl-C would."""
        _fresh_warnings()
        watcher = threading.Thread(target=self._watch, args=(connection,), daemon=True)
        with self._lock:
            self._serving = True
        watcher.start()
        try:
            yield
        finally:
            with self._lock:
                self._serving = False
            # Wake the watcher (its recv returns at once) and wait for it: a watcher left blocked
            # on this socket could read from the next check's once its descriptor number is reused.
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RD)
            watcher.join()

    def _watch(self, connection: socket.socket) -> None:
        while True:
            try:
                if connection.recv(1):
                    continue  # a client sends nothing after its request
            except TimeoutError:
                with self._lock:
                    if not self._serving:
                        return
                continue
            except OSError:
                pass
            with self._lock:
                if self._serving:
                    self.say("the client went away: its check interrupted")
                    os.kill(os.getpid(), signal.SIGINT)
            return


def _parsed(body: bytes) -> object:
    """A request's JSON; None for none (a nesting too deep to parse included)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _fresh_warnings() -> None:
    """Each check shows a "once" warning once, as a process of its own would."""
    warnings.onceregistry.clear()
    mutated = getattr(warnings, "_filters_mutated", None)  # invalidates every module's registry
    if mutated is not None:
        mutated()


def _stop(*_: object) -> None:
    raise SystemExit(0)


def main(argv: list[str]) -> None:
    """``NAME STARTER_PID FIRST_CHECK_JSON`` (grader.warm.client.start_service; a STARTER_PID of
    0: wait for no process)."""
    name, starter, first = argv[0], int(argv[1]), json.loads(argv[2])
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _stop)
    folder = place.runtime_folder(os.environ)
    if folder is None or place.socket_path(folder, name) is None:
        return
    if place.key(os.environ, place.search_path(), place.code_stamp(place.search_path())) != name:
        return  # the code changed between the client's look and this start: its name is not this service's
    lock = os.open(folder / f"warm-{name}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another service holds this socket's lock
    service = Service(folder, name)
    service.pid_file.write_text(str(os.getpid()))
    listener = None
    reason = "stopped"
    try:
        if starter > 0:
            wait_for_exit(starter, WAIT_FOR_STARTER_S)  # the check that started this service
        service.warm_up(first)
        address = service.address
        assert address is not None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(address)  # we hold the lock: whatever is there is a dead service's
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        previous = os.umask(0o177)
        try:
            listener.bind(os.fspath(address))
        finally:
            os.umask(previous)
        listener.listen(8)
        service.say("ready")
        reason = service.serve(listener)
    except SystemExit:
        reason = "SIGTERM"
    except BaseException as error:  # noqa: BLE001 (logged; clients fall back)
        reason = f"{type(error).__name__}: {error}"
    finally:
        if listener is not None:  # the lock is still held: the socket is this service's
            listener.close()
            with contextlib.suppress(OSError):
                os.unlink(service.address)  # type: ignore[arg-type]
        with contextlib.suppress(OSError):
            os.unlink(service.pid_file)
        if service.pool is not None:
            service.pool.close()
        service.say(f"stopped: {reason}")
        os.close(lock)
