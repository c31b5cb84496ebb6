"""Where a user's warm grading service listens, and what names it.

The socket lies in a folder only its user can enter: ``JAXGRADE_RUNTIME_DIR`` when set (the
tests give each test its own), else ``$XDG_RUNTIME_DIR/jaxgrade`` (the login session's private
folder), else ``jaxgrade-UID`` in the temporary directory. The folder must be a real folder
(not a link), owned by this user and closed to everyone else (mode 0700 or stricter); anything
else (another user made it first, someone widened it) means no warm path, never a shared one.
Both ends then check the other's uid with SO_PEERCRED (grader.warm.frames.peer_uid).

The socket's name is a hash of everything the service's answers depend on besides the request:
the protocol, the grader's version and the stamp of its code (each module's size and mtime, and
each ``sys.path`` folder's mtime: an edited checkout, an upgrade of jaxgrade or of a dependency
names another socket, and a service whose code changed under it exits), the interpreter and its
``sys.path``, and the environment variables the grading reads
(``relevant_environment``). A check whose environment differs reaches another service or none.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Mapping

from grader import __version__
from grader.batch.warming import OFF, background_allowed  # noqa: F401 (OFF: the switch's name, for callers)
from grader.warm.frames import PROTOCOL
RUNTIME_DIR = "JAXGRADE_RUNTIME_DIR"
IDLE = "JAXGRADE_DAEMON_IDLE_S"  # the service exits after this long without a check (default 600)
IDLE_S = 600.0
PACKAGE = Path(__file__).resolve().parent.parent  # grader/
# What the parent of a check reads from the environment (the grader's own switches and paths,
# JAX's and XLA's, Python's, colours, locale, temporary and cache folders, CI summaries).
_PREFIXES = ("JAXGRADE_", "JAX_", "XLA_", "TF_", "PYTHON", "HYPOTHESIS", "XDG_", "LC_", "GITHUB_", "OPENBLAS_",
             "OMP_", "LD_")
_NAMES = frozenset({"PATH", "LANG", "LANGUAGE", "HOME", "TMPDIR", "TEMP", "TMP", "SYSTEMROOT", "TERM", "COLUMNS",
                    "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "CI", "USER", "LOGNAME", "TZ",
                    "SOURCE_DATE_EPOCH"})
_SOCKET_MAX = 100  # sun_path holds 108 bytes
# The data a wheel carries inside the package (grader.paths), not code: a kept exercise is loaded
# again when its files change (grader.authoring.exercise.keep_loaded), Jinja reloads a changed template.
# Their ~670 .py files (the variants) took a wheel's stamp from under 1 ms to ~18 ms, per check.
_DATA = frozenset({"exercises", "templates"})


def switched_off(arguments: list[str], environ: Mapping[str, str]) -> bool:
    """Whether this check must grade in-process: ``--no-daemon``, ``JAXGRADE_NO_DAEMON``, a CI
    job (``CI`` set: a service would outlive the job), or what a service would print otherwise
    than this process (help, the version, ``JAXGRADE_TIMINGS``: a breakdown of this process)."""
    if not background_allowed(environ):
        return True
    if environ.get("JAXGRADE_TIMINGS") == "1":
        return True
    return any(a in ("--no-daemon", "-h", "--help", "--version") for a in arguments)


def relevant_environment(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k in _NAMES or k.startswith(_PREFIXES)}


def search_path() -> list[str]:
    """This interpreter's ``sys.path``, the current folder of an empty entry made absolute: the
    service imports from exactly where this process does, never from a later working folder."""
    return [entry or os.getcwd() for entry in sys.path]


def code_stamp(path: list[str]) -> str:
    """Each of the grader's modules' path, size and mtime (about 2 ms for ~140 files; not the
    exercises and templates a wheel carries inside the package), and the
    mtime of each site-packages folder on ``path``: installing, upgrading or removing a package
    there (JAX, Hypothesis) adds and removes entries in it, which changes its mtime. (Not other
    folders: `python -m grader` puts the working folder on ``path``, where every save changes it.)"""
    digest = hashlib.sha256()
    for entry in path:
        if os.path.basename(entry) not in ("site-packages", "dist-packages"):
            continue
        try:
            digest.update(f"{entry}\0{os.stat(entry).st_mtime_ns}\n".encode())
        except OSError:
            digest.update(f"{entry}\0-\n".encode())
    for root, folders, files in os.walk(PACKAGE):
        folders[:] = sorted(f for f in folders if f != "__pycache__" and not (root == str(PACKAGE) and f in _DATA))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                info = os.stat(path)
                digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def key(environ: Mapping[str, str], path: list[str], stamp: str) -> str:
    named = json.dumps([PROTOCOL, __version__, str(PACKAGE), sys.executable, sys.version, path, stamp,
                        sorted(relevant_environment(environ).items())])
    return hashlib.sha256(named.encode()).hexdigest()[:24]


def private_folder(path: Path) -> bool:
    """Whether ``path`` is a folder (not a link) owned by this user that no one else may enter."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o077


def runtime_folder(environ: Mapping[str, str]) -> Path | None:
    """The private folder holding this user's sockets, made (0700) if missing; None where it
    cannot be made or is not private (then the check grades in-process)."""
    if environ.get(RUNTIME_DIR):
        folder = Path(environ[RUNTIME_DIR])
    elif environ.get("XDG_RUNTIME_DIR") and private_folder(Path(environ["XDG_RUNTIME_DIR"])):
        folder = Path(environ["XDG_RUNTIME_DIR"]) / "jaxgrade"
    else:
        folder = Path(tempfile.gettempdir()) / f"jaxgrade-{os.geteuid()}"
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    return folder if private_folder(folder) else None


def socket_path(folder: Path, name: str) -> Path | None:
    path = folder / f"warm-{name}.sock"
    return path if len(os.fsencode(path)) <= _SOCKET_MAX else None


def idle_seconds(environ: Mapping[str, str]) -> float:
    try:
        return max(float(environ.get(IDLE, IDLE_S)), 0.1)
    except ValueError:
        return IDLE_S
