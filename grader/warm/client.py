"""A check through the user's warm grading service, when there is one: ``jaxgrade check``'s
(``through_service``) and ``grader.check()``'s in a notebook's kernel (``report_through_service``).

``through_service`` returns the check's exit code after printing exactly what the service sent
(the bytes the CLI would have written, in the order it wrote them), or None: the caller then
grades in-process, as without a service. None whatever goes wrong (no folder, no socket, a stale
socket, a service of another user, a version or environment mismatch, a malformed frame, a
service that dies mid-check): nothing is printed before the service's exit code arrives, so a
fallback never prints twice. Where no service answers, one is started in the background
(``start_service``) for the next check; it waits for this process to exit before it imports
anything, so this check is not slowed.

``report_through_service`` is the same for a kernel's cells (grader.notebook.warm_cells): the report's
data, or ``Absent`` where no service listened (the kernel grades the cells itself, then starts
one: ``Absent.start``, which waits for nothing, the kernel's check being done), or None.
"""
from __future__ import annotations

import json
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.batch.warming import spawn_detached
from grader.errors import WarmServiceError
from grader.warm import frames, place

ACCEPT_S = 2.0  # a service busy with another check for longer: grade in-process instead
FRAME_S = 900.0  # between two frames once accepted (a check is bounded by its limits, far less)
BOOT = ("import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
        "from grader.warm.service import main; main(sys.argv[2:])")


def through_service(arguments: list[str]) -> int | None:
    environ = os.environ
    if place.switched_off(arguments, environ) or not all(hasattr(s, "buffer") for s in (sys.stdout, sys.stderr)):
        return None  # (streams without bytes underneath: a caller capturing them in-process)
    try:
        reached = _reach(environ)
        if reached is None:
            return None
        if isinstance(reached, Absent):
            start_service(reached.path, reached.name, arguments, after=os.getpid())
            return None
        connection, name = reached
        with connection:
            answered = _ask(connection, arguments, environ, name)
    except (OSError, WarmServiceError, ValueError):
        return None
    if answered is None:
        return None
    code, written = answered
    for tag, body in written:  # a BrokenPipeError here is the CLI's to handle, as when it prints itself
        stream = sys.stdout if tag == frames.STDOUT else sys.stderr
        stream.flush()
        stream.buffer.write(body)
        stream.buffer.flush()
    return code


@dataclass(frozen=True)
class Absent:
    """No service listened on the socket this process's check would use (``path``: the search
    path it imports from, ``name``: its socket's)."""
    path: list[str]
    name: str

    def start(self, first: list[str]) -> None:
        """Start it for the next check, warmed on ``first`` (a ``jaxgrade check`` argv)."""
        start_service(self.path, self.name, first, after=None)


def report_through_service(fields: dict[str, Any]) -> dict[str, Any] | Absent | None:
    """The report data the service sent for a notebook check's ``fields``
    (``grader.notebook.warm_cells.request``); Absent where no service listened; None where none may be
    asked (switched off, no private folder) or it refused, broke off or sent anything else."""
    environ = os.environ
    if place.switched_off([], environ):
        return None
    try:
        reached = _reach(environ)
        if reached is None or isinstance(reached, Absent):
            return reached
        connection, name = reached
        with connection:
            if not _accepted(connection, fields, environ, name):
                return None
            tag, body = frames.receive(connection)
        data = json.loads(body) if tag == frames.REPORT else None
    except (OSError, WarmServiceError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _reach(environ: os._Environ[str]) -> tuple[socket.socket, str] | Absent | None:
    """A connection to the service this process's check would use, and its name; Absent where
    none listens; None where there is no warm path (no private folder, a socket path too long)."""
    folder = place.runtime_folder(environ)
    if folder is None:
        return None
    path = place.search_path()
    name = place.key(environ, path, place.code_stamp(path))
    address = place.socket_path(folder, name)
    if address is None:
        return None
    connection = _connect(address)
    return Absent(path, name) if connection is None else (connection, name)


def _connect(address: Path) -> socket.socket | None:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(ACCEPT_S)
        connection.connect(os.fspath(address))
        if frames.peer_uid(connection) != os.geteuid():  # only our own service
            raise WarmServiceError("the socket's service runs as another user")
        return connection
    except (OSError, WarmServiceError):
        connection.close()
        return None


def _stream(stream: object) -> dict[str, object]:
    return {"tty": bool(getattr(stream, "isatty", lambda: False)()),
            "encoding": getattr(stream, "encoding", None) or "utf-8", "errors": getattr(stream, "errors", None)
            or "strict"}


def _ask(connection: socket.socket, arguments: list[str], environ: os._Environ[str],
         name: str) -> tuple[int, list[tuple[bytes, bytes]]] | None:
    """The service's exit code and what it wrote, or None where it refused or broke off."""
    umask = os.umask(0o077)
    os.umask(umask)
    fields = {"kind": "check", "argv": arguments, "cwd": os.getcwd(), "umask": umask, "stdout": _stream(sys.stdout),
              "stderr": _stream(sys.stderr)}
    if not _accepted(connection, fields, environ, name):
        return None
    written: list[tuple[bytes, bytes]] = []
    while True:
        tag, body = frames.receive(connection)
        if tag in (frames.STDOUT, frames.STDERR):
            written.append((tag, body))
        elif tag == frames.EXIT:
            code = json.loads(body)
            if type(code) is not int:
                return None
            return code, written
        else:
            return None


def _accepted(connection: socket.socket, fields: dict[str, Any], environ: os._Environ[str], name: str) -> bool:
    """Send a request of ``fields`` and the envelope every request has (grader.warm.frames.ENVELOPE);
    whether the service accepted it (then its answer's frames follow, each within FRAME_S)."""
    request = {**fields, "protocol": frames.PROTOCOL, "key": name, "env": place.relevant_environment(environ)}
    frames.send(connection, frames.REQUEST, json.dumps(request).encode())
    tag, _ = frames.receive(connection)
    if tag != frames.ACCEPTED:
        return False
    connection.settimeout(FRAME_S)
    return True


def start_service(path: list[str], name: str, arguments: list[str], after: int | None) -> None:
    """Start the service in the background, in a session of its own, with nothing of this
    process's but its environment: it outlives this check and serves the next ones. It waits for
    process ``after`` to exit before it imports anything (None: for nothing), then grades
    ``arguments`` (a ``jaxgrade check`` argv) once, its output discarded, to warm itself up. Two
    checks at once may both start one: the second finds the first's lock and exits at once."""
    spawn_detached(BOOT, [json.dumps(path), name, str(after or 0), json.dumps({"argv": arguments, "cwd": os.getcwd()})])
