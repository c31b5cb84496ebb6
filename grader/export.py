"""Package an exercise for where it is used: a Gradescope autograder, or a student's folder.

    jaxgrade export gradescope -e SLUG -o autograder.zip
    jaxgrade export student -e SLUG -o DIR

The Gradescope zip holds ``setup.sh`` (run once on Gradescope's Ubuntu image: installs Python
3.11+ and the bundled jaxgrade source with pip), ``run_autograder`` (run per submission: grades
the ``.py`` file in /autograder/submission and writes /autograder/results/results.json) and the
source under ``jaxgrade/``. ``JAXGRADE_AUTOGRADER_ROOT`` moves /autograder (the tests point it at
a temporary tree) and ``JAXGRADE_PYTHON`` picks the interpreter.

The student folder holds the statement, the starter and a ``check`` script that runs the
visible checks only: the exercise copy inside it has no reference solution, no known-wrong or
right variants, and no check that is not ``visible`` (their code is removed from checks.py).
"""
from __future__ import annotations

import argparse
import atexit
import ast
import ctypes
import errno
import hashlib
import json
import os
import shutil
import socket
import stat
import struct
import sys
import tempfile
import traceback
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import __version__
from grader.errors import ExerciseError, ExitCode, ExportError, GraderFailure, SandboxError
from grader.exercise import Exercise, exercises_root, find_exercise, load_exercise
from grader.paths import data_folder
from grader.report.result import Report
from grader.source import Prepared, prepare_folder

PACKAGE = Path(__file__).resolve().parent
SOURCE_ROOT = PACKAGE.parent
# What of an exercise folder a grader needs (reference.py warms the compilation cache).
GRADER_PARTS = ("exercise.toml", "statement.md", "starter.py", "checks.py", "reference.py")
STUDENT_PARTS = ("statement.md", "starter.py")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")



# ---------------------------------------------------------------------------------------------
# Gradescope

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (Ubuntu). It installs
# Python 3.11 or newer and the jaxgrade source bundled next to it, with pip, into a virtualenv.
set -euo pipefail
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${JAXGRADE_AUTOGRADER_ROOT:-/autograder}"
VENV="$ROOT/jaxgrade-venv"
# The compilation cache, where the submission's uid can read it (root's home is closed to it).
export JAXGRADE_CACHE="${JAXGRADE_CACHE:-$ROOT/jaxgrade-cache}"
export DEBIAN_FRONTEND=noninteractive

pick_python() {
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

PYTHON="$(pick_python || true)"
if [ -z "$PYTHON" ]; then  # Ubuntu 22.04 ships 3.10: take 3.11 from the deadsnakes archive
  apt-get update
  apt-get install -y --no-install-recommends software-properties-common
  add-apt-repository -y ppa:deadsnakes/ppa
  apt-get update
  apt-get install -y --no-install-recommends python3.11 python3.11-venv
  PYTHON=python3.11
fi
if ! "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then
  apt-get update
  apt-get install -y --no-install-recommends "$(basename "$PYTHON")-venv" || apt-get install -y python3-venv
fi

"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --upgrade pip
"$VENV/bin/python" -m pip install "$SOURCE/jaxgrade"
# Grade the reference once now: it fills the compilation cache, so students' grading is faster.
# The cache is root's, readable and not writable by every other user (the submission's uid).
PYTHONPATH="$SOURCE/jaxgrade" "$VENV/bin/python" -P -s -m grader.export warm-cache -e @SLUG@ || true
# Gradescope's advice for student code: another user, and `chmod o=` on what it must not read.
# The sandbox gives each submission's process a uid of its own (61000-61999, deliberately no
# account: it never reuses a named uid). Here every copy of the reference and the checks (the
# bundled source, pip's build folder, the virtualenv) is closed to other users, and a probe
# running as an unprivileged uid must fail to read them, or the image build fails now.
# run_autograder does the same before every submission.
PYTHONPATH="$SOURCE/jaxgrade" "$VENV/bin/python" -P -s -m grader.export lock --root "$ROOT" -e @SLUG@
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this, as root, for every submission (exercise @SLUG@). It writes
# results/results.json and never prints JSON to stdout. Before grading it closes every copy of the
# reference and the checks to other users and proves an unprivileged uid cannot read them, and it
# refuses IP sockets to the grader and all it starts (seccomp); the submission itself runs under a
# uid of its own (the sandbox's). If the grader or the container fails (the sandbox cannot be set
# up, a check cannot be judged, a required protection is missing), it writes NO results.json, on
# purpose: Gradescope then reports "The autograder failed to execute correctly" instead of
# recording a score the student did not earn. Protections it has to do without are listed loudly.
set -uo pipefail
ROOT="${JAXGRADE_AUTOGRADER_ROOT:-/autograder}"
PYTHON="${JAXGRADE_PYTHON:-$ROOT/jaxgrade-venv/bin/python}"
export PYTHONPATH="$ROOT/source/jaxgrade${PYTHONPATH:+:$PYTHONPATH}"
export JAXGRADE_CACHE="${JAXGRADE_CACHE:-$ROOT/jaxgrade-cache}"  # the one setup.sh filled
rm -f "$ROOT/results/results.json"
# -P -s: nothing of the working directory (where Gradescope may put the student's files) or of a
# user site is imported by this root process; only the bundled source ($PYTHONPATH) and the venv.
"$PYTHON" -P -s -m grader.export autograde --root "$ROOT" -e @SLUG@
status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then  # 3: the grader already said why
  rm -f "$ROOT/results/results.json"
  echo "jaxgrade: GRADER FAULT (exit $status, see above). No results.json was written, so Gradescope records no"
  echo "score for this submission. Fix the cause, then regrade it."
fi
exit "$status"
"""


def _copy_grader(target: Path) -> None:
    """The jaxgrade source pip needs (pyproject, grader/, templates/), without any exercise."""
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (SOURCE_ROOT / name).is_file():
            shutil.copy2(SOURCE_ROOT / name, target / name)
    if not (target / "README.md").exists():  # pyproject names it as the readme
        (target / "README.md").write_text("jaxgrade, bundled for an autograder.\n")
    shutil.copytree(PACKAGE, target / "grader", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*",
                                                                            "exercises", "templates"))
    shutil.copytree(data_folder("templates"), target / "templates", ignore=SKIP)


def _copy_source(exercise: Exercise, target: Path) -> None:
    """The jaxgrade source pip needs with this one exercise."""
    _copy_grader(target)
    copy_exercise(exercise, target / "exercises" / exercise.slug)


def copy_exercise(exercise: Exercise, destination: Path, parts: tuple[str, ...] = GRADER_PARTS) -> Path:
    """Copy the ``parts`` of an exercise folder that exist (default: what grading needs) to ``destination``."""
    destination.mkdir(parents=True)
    for part in parts:
        if (exercise.directory / part).is_file():
            shutil.copy2(exercise.directory / part, destination / part)
    return destination


def export_gradescope(exercise: Exercise, output: Path) -> Path:
    """Write the autograder zip for ``exercise`` to ``output`` and return its path."""
    output = Path(output)
    if output.suffix != ".zip":
        raise ExportError(f"{output}: Gradescope takes a .zip; name the output e.g. autograder.zip")
    with tempfile.TemporaryDirectory(prefix="jaxgrade-export-") as scratch:
        source = Path(scratch) / "jaxgrade"
        source.mkdir()
        _copy_source(exercise, source)
        output.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
                info = zipfile.ZipInfo(name)
                info.external_attr = (stat.S_IFREG | 0o755) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, text.replace("@SLUG@", exercise.slug))
            for path in sorted(source.rglob("*")):
                if path.is_file():
                    archive.write(path, str(Path("jaxgrade") / path.relative_to(source)))
    return output


# ---------------------------------------------------------------------------------------------
# Gradescope: the container around a submission
#
# Gradescope runs run_autograder as root in a Docker container with Docker's default
# capabilities: no CAP_SYS_ADMIN, so the sandbox can make no namespaces (no private network,
# no hidden paths, no private /tmp), while it can still give the child a uid of its own
# (CAP_SETUID). What the namespaces would have done is done here where it can be, and checked:
# file permissions keep every copy of the reference and checks from that uid (Gradescope's own
# advice: a separate user, and `chmod o=` on what it must not read), and a seccomp filter
# refuses the grader and every process it starts IP sockets. What cannot be had is printed
# loudly; what must be had (a uid of its own, limits, unreadable secrets) fails closed: no
# results.json, so Gradescope reports a failed run instead of a score.

# A uid that owns nothing and belongs to no group, like a sandbox child's (the last of the
# sandbox's range, which it only leases when 999 children run at once): the probe that tries
# to read the secrets runs as it.
PROBE_UID = 61999
# The exercise's files a student may see anyway (they are in the student's export).
PUBLIC_PARTS = frozenset({"statement.md", "starter.py", "exercise.toml"})
# Files this small are not looked for by content: an empty __init__.py of the exercise would
# match every empty file in site-packages, and closing those would break imports.
MIN_SECRET_BYTES = 64
# Protections the sandbox reports that a Gradescope run cannot do without: grading fails closed.
REQUIRED = ("user", "limits")
# What a fully confined child reports as active (grader/sandbox/confine.py); one it does not
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


def secret_fingerprints(exercise: Exercise) -> dict[tuple[int, str], str]:
    """(size, sha256) → name of every file of the exercise a student must not read (the reference,
    the checks with their hidden inputs, any data beside them)."""
    found = {}
    for path in sorted(exercise.directory.rglob("*")):
        if (path.is_file() and path.name not in PUBLIC_PARTS and "__pycache__" not in path.parts
                and path.stat().st_size >= MIN_SECRET_BYTES):
            found[(path.stat().st_size, _digest(path))] = path.name
    return found


def _scan_roots(root: Path) -> list[Path]:
    """Where copies of the exercise can be: the autograder tree (the bundled source, the build
    folder pip leaves in it, the virtualenv), every site-packages on sys.path, the exercises root."""
    candidates = [root, exercises_root(), *(Path(p) for p in sys.path
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


def protect_secrets(root: Path, exercise: Exercise) -> Protection:
    """Close every copy of the exercise's secret files to other users, then prove no other user can
    read any: a probe running as an unprivileged uid tries. Raises :class:`GraderFailure` otherwise."""
    copies = find_copies(_scan_roots(root), secret_fingerprints(exercise))
    closed = []
    try:
        closed = lock(copies, exercise.slug)
        _close_to_others(exercise.directory)  # the copy in use, whatever its files' sizes
        results = root / "results"  # Gradescope's advice: the student's code has no business there
        if results.is_dir():
            _close_to_others(results)
    except OSError as error:
        raise GraderFailure(f"could not close the exercise's files to other users ({error})") from None
    leaks = readable_by_other_users([*copies, *closed, exercise.directory])
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


def judge_protections(report: Report, own: list[Protection]) -> tuple[list[Protection], list[str]]:
    """Every protection of this run (the sandbox's, then the export's), and the names of those missing
    with nothing in their place. Raises :class:`GraderFailure` when one a Gradescope run requires is missing."""
    mine = {p.name: p for p in own}
    reported = report.environment.get("protections") or {}
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


def _banner(lines: list[str]) -> str:
    bar = "!" * 78
    return "\n".join([bar, *lines, bar])


def shared_compile_cache(exercise: Exercise) -> str | None:
    """The compilation cache, filled from the reference (once per version of the exercise) and
    opened to every user for reading, not writing: in a container the submission runs as a uid
    of its own, which cannot read root's 0700 home (nor a cache JAX wrote under umask 077), and a
    cache it cannot read costs every submission its compilations. None: no cache here."""
    from grader.engine import warm_compile_cache
    from grader.cache import cache_root

    directory, root = warm_compile_cache(exercise), cache_root()
    if directory is None or root is None:
        return None
    for folder, _, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    return directory


def _grade_or_fault(root: Path, exercise: Exercise, submission: Prepared) -> tuple[Report, list[Protection], list[str]]:
    """Put the container's protections in place, grade, and judge the run. Raises :class:`GraderFailure`."""
    from grader.engine import grade

    if os.geteuid() != 0:
        raise GraderFailure(f"run_autograder runs as uid {os.geteuid()}, not root: the sandbox cannot give the "
                          "submission a uid of its own, so it could read the reference solution and hidden checks "
                          "that the grader reads. Gradescope runs autograders as root.")
    own = [protect_secrets(root, exercise), block_network()]
    report = grade(exercise, submission.path, display_path=submission.shown, helpers=submission.helpers,
                   notes=submission.notes, compile_cache=shared_compile_cache(exercise))
    errors = [c for c in report.checks if c.status == "error"]
    if report.status == "error" or errors:
        reason = errors[0].message if errors else "nothing could be graded"
        raise GraderFailure(f"{len(errors)} of {len(report.checks)} checks could not be judged: {reason}")
    protections, missing = judge_protections(report, own)
    return report, protections, missing


def _scratch() -> Path:
    """A private folder for a notebook's Python, removed when the autograder process exits."""
    folder = Path(tempfile.mkdtemp(prefix="jaxgrade-submission-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _write_results(results: Path, data: dict[str, Any]) -> None:
    temporary = results.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n")
    temporary.replace(results)  # a reader never sees half a file


def autograde(root: Path, slug: str) -> int:
    """Grade ``root``/submission and write ``root``/results/results.json (what run_autograder runs).

    0: results written. 3: a grader fault; no results.json, on purpose, so Gradescope reports
    "The autograder failed to execute correctly" instead of recording a score nobody earned."""
    from grader.report.render import gradescope

    root = Path(root)
    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    results.unlink(missing_ok=True)
    try:
        exercise = find_exercise(slug)
        submission, problem = prepare_folder(root / "submission", exercise.function, _scratch(),
                                             f"{exercise.slug}.py")
        if submission is None:  # the student's to fix: a result that says what to upload
            _write_results(results, {"score": 0, "output": problem, "output_format": "text",
                                     "visibility": "visible", "tests": []})
            print(f"jaxgrade: wrote {results}: {problem}")
            return ExitCode.OK
        report, protections, missing = _grade_or_fault(root, exercise, submission)
    except (GraderFailure, ExerciseError, SandboxError) as fault:
        print(_banner(["jaxgrade: GRADER FAULT. Nothing was recorded for this submission.",
                       f"Why: {fault}",
                       "No results.json was written, so Gradescope shows \"The autograder failed to execute",
                       "correctly\" and records no score: the student is not marked down for the grader's fault.",
                       "Fix the cause, then regrade the submission."]), flush=True)
        return ExitCode.UNGRADABLE
    data = gradescope(report)
    # Diagnostics for course staff only: extra_data, and stdout (stdout_visibility "hidden"). Never a
    # test: a hidden test would hide the student's total (Gradescope's results.json specification).
    data["extra_data"]["protections"] = {p.name: {"active": p.active, "detail": p.detail} for p in protections}
    if missing:
        data["extra_data"]["missing_protections"] = missing
    _write_results(results, data)
    print(f"jaxgrade: wrote {results} for {submission.shown}: {report.score:g}/{report.max_score:g}")
    _print_protections(protections, missing)
    return ExitCode.OK


def _print_protections(protections: list[Protection], missing: list[str]) -> None:
    """Every protection of the run, then a loud banner naming those missing (course staff read this)."""
    print("jaxgrade: protections for this submission:")
    for protection in protections:
        label = "ok" if protection.active else "MISSING" if protection.name in missing else "replaced"
        instead = f" (replaced by {COVERED_BY[protection.name]}, below)" if label == "replaced" else ""
        print(f"  {label:8} {protection.name}: {protection.detail}{instead}")
    if missing:
        print(_banner([f"jaxgrade WARNING: {len(missing)} sandbox protection(s) MISSING in this container: "
                       + ", ".join(missing) + ".",
                       "The submission was graded without them (details above). See docs/threat-model.md,",
                       "\"root without CAP_SYS_ADMIN\"; results.json lists them too."]))


# ---------------------------------------------------------------------------------------------
# PrairieLearn

# The image PrairieLearn grades in: its own maintained Python grader image (security updates,
# Python >= 3.11 in /venv, uv) with jaxgrade and the JAX it pins installed. PrairieLearn pulls
# only public images and grades with networking off, so everything is installed when the image
# is built, and the image holds no exercise: the exercise reaches the grader in /grade/tests.
PL_BASE_IMAGE = "prairielearn/grader-python"
PL_IMAGE_PLACEHOLDER = "YOUR_REGISTRY_ACCOUNT/jaxgrade-grader:{version}"

PL_DOCKERFILE = """\
# jaxgrade's grader image for PrairieLearn: PrairieLearn's maintained Python grader image with
# jaxgrade @VERSION@ and the JAX it pins. No exercise is inside (PrairieLearn only pulls public
# images): the reference and checks reach the grader in /grade/tests when a submission is graded.
# Build for PrairieLearn's platform, publish, then put the name in info.json and sync it:
#   docker build --platform linux/amd64 -t ACCOUNT/jaxgrade-grader:@VERSION@ .
#   docker push ACCOUNT/jaxgrade-grader:@VERSION@
FROM @BASE@
COPY jaxgrade /opt/jaxgrade-src
RUN uv pip install --python /venv/bin/python /opt/jaxgrade-src && rm -rf /opt/jaxgrade-src \\
    && /venv/bin/python -c "import grader, jax; print('jaxgrade', grader.__version__, 'jax', jax.__version__)"
"""

PL_RUN_SH = r"""#!/bin/bash
# PrairieLearn's external grader entrypoint for exercise @SLUG@ (info.json: /grade/tests/run.sh).
# It runs as root in the jaxgrade grader image: grades the file in /grade/student with the
# exercise in /grade/tests/exercises and writes /grade/results/results.json. Before grading it
# closes the exercise to other users and proves the submission's uid cannot read it, as the
# Gradescope export does. A grader fault becomes "gradable": false (no attempt is counted); an
# unforeseen crash exits non-zero, which PrairieLearn also treats as not gradable.
set -uo pipefail
GRADE="${JAXGRADE_GRADE_ROOT:-/grade}"
PYTHON="${JAXGRADE_PYTHON:-python3}"
export JAXGRADE_EXERCISES="$GRADE/tests/exercises"
# The container lives for one submission: a compilation cache would first have to be filled
# from the reference, which costs more than it saves.
export JAXGRADE_CACHE="${JAXGRADE_CACHE:-off}"
mkdir -p "$GRADE/results"
# -I: the working directory may be the student's folder; a grader.py there must never be imported
# by this root process (nor a user site, nor PYTHON* variables): the image's installed jaxgrade only.
exec "$PYTHON" -I -m grader.export prairielearn-grade --root "$GRADE" -e @SLUG@
"""

PL_QUESTION = """\
<pl-question-panel>
<markdown>
@STATEMENT@
</markdown>
<p>Write your solution in <code>@SLUG@.py</code>. It is graded by jaxgrade: what your code returns,
and how it places its arrays.</p>
</pl-question-panel>

<pl-file-editor file-name="@SLUG@.py" ace-mode="ace/mode/python" source-file-name="starter.py"></pl-file-editor>

<pl-submission-panel>
<pl-external-grader-results></pl-external-grader-results>
<pl-file-preview></pl-file-preview>
</pl-submission-panel>
"""


def _pl_info(exercise: Exercise, image: str) -> dict[str, Any]:
    """The question's info.json: externally graded by run.sh in ``image``, networking off."""
    timeout = min(600, int(exercise.limits.total_s) + 60)  # grading, plus starting JAX
    return {"uuid": str(uuid.uuid4()), "title": exercise.title, "topic": "JAX", "tags": ["jaxgrade", exercise.slug],
            "type": "v3", "gradingMethod": "External", "singleVariant": True,
            "externalGradingOptions": {
                "comment": f"jaxgrade {__version__}: build the image from image/ (see image/Dockerfile)",
                "enabled": True, "image": image, "entrypoint": "/grade/tests/run.sh", "timeout": timeout,
                "enableNetworking": False}}


def _pl_statement(exercise: Exercise) -> str:
    """The statement for question.html, which PrairieLearn renders as a Mustache template first."""
    text = (exercise.directory / "statement.md").read_text().strip()
    if "{{" in text or "}}" in text:
        text = "{{=<% %>=}}\n" + text + "\n<%={{ }}=%>"
    return text


def export_prairielearn(exercise: Exercise, output: Path, image: str | None = None) -> Path:
    """Write a PrairieLearn question folder for ``exercise`` to ``output`` (new or empty):

    info.json, question.html, starter.py (the editor's starting code), tests/run.sh and
    tests/exercises/SLUG (what the grader needs, copied to /grade/tests), and image/ (the
    Docker build context of the grader image: jaxgrade's source without any exercise)."""
    output = Path(output)
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise ExportError(f"{output} already exists and is not an empty folder; choose a new folder with -o")
    image = image or PL_IMAGE_PLACEHOLDER.format(version=__version__)
    tests = output / "tests"
    copy_exercise(exercise, tests / "exercises" / exercise.slug)
    run = tests / "run.sh"
    run.write_text(PL_RUN_SH.replace("@SLUG@", exercise.slug))
    run.chmod(0o755)
    (output / "info.json").write_text(json.dumps(_pl_info(exercise, image), indent=2) + "\n")
    (output / "question.html").write_text(PL_QUESTION.replace("@SLUG@", exercise.slug)
                                          .replace("@STATEMENT@", _pl_statement(exercise)))
    (output / "starter.py").write_text(exercise.starter.read_text().replace("THIS_FILE.py", f"{exercise.slug}.py"))
    source = output / "image" / "jaxgrade"
    source.mkdir(parents=True)
    _copy_grader(source)
    (source / "exercises").mkdir()
    (source / "exercises" / "README.txt").write_text("No exercise is built into the grader image: PrairieLearn "
                                                     "copies the question's tests/ folder to /grade/tests.\n")
    (output / "image" / "Dockerfile").write_text(PL_DOCKERFILE.replace("@BASE@", PL_BASE_IMAGE)
                                                 .replace("@VERSION@", __version__))
    return output


def prairielearn_grade(root: Path, slug: str) -> int:
    """Grade ``root``/student and write ``root``/results/results.json for PrairieLearn (what
    tests/run.sh runs). Always writes results when it returns; 0."""
    from grader.report.render import GRADER_FAULT, prairielearn

    root = Path(root)
    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    results.unlink(missing_ok=True)
    try:
        exercise = find_exercise(slug)
        submission, problem = prepare_folder(root / "student", exercise.function, _scratch(), f"{exercise.slug}.py")
        if submission is None:  # nothing to grade: no attempt counted, and the student is told why
            _write_results(results, {"gradable": False, "format_errors": [problem], "message": problem})
            print(f"jaxgrade: wrote {results}: {problem}")
            return ExitCode.OK
        report, protections, missing = _grade_or_fault(root, exercise, submission)
    except (GraderFailure, ExerciseError, SandboxError) as fault:
        text = GRADER_FAULT.format(why=fault)
        _write_results(results, {"gradable": False, "format_errors": [text], "message": text})
        print(_banner(["jaxgrade: GRADER FAULT. The submission was not graded: results.json says",
                       "\"gradable\": false, so PrairieLearn counts no attempt and awards no points.",
                       f"Why: {fault}"]), flush=True)
        return ExitCode.OK
    data = prairielearn(report, stage=exercise.release.stage())
    data["jaxgrade"] = {"protections": {p.name: {"active": p.active, "detail": p.detail} for p in protections},
                        "missing_protections": missing}
    _write_results(results, data)
    print(f"jaxgrade: wrote {results} for {submission.shown}: {report.score:g}/{report.max_score:g}")
    _print_protections(protections, missing)
    return ExitCode.OK


# ---------------------------------------------------------------------------------------------
# Student folder

CHECK_SCRIPT = '''#!/usr/bin/env python3
"""Run the visible checks of @SLUG@ on your solution:

    python check            (checks @SLUG@.py)
    python check FILE.py [--format html -o report.html]

Needs jaxgrade installed (pip install jaxgrade, or the package your instructor gave you)."""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ["JAXGRADE_EXERCISES"] = str(HERE / ".jaxgrade" / "exercises")
os.environ.setdefault("JAXGRADE_CACHE", "off")  # no reference solution here to fill it from
try:
    from grader.cli import main
except ImportError:
    sys.exit("check needs jaxgrade: install it with  pip install jaxgrade  (Python 3.11 or newer)")
arguments = sys.argv[1:]
if not arguments or arguments[0].startswith("-"):
    arguments = [str(HERE / "@SLUG@.py"), *arguments]
sys.exit(main(["check", *arguments, "-e", "@SLUG@"]))
'''

README = """# {title}

The task is in `statement.md`; write your solution in `{slug}.py`.

Check your work (needs jaxgrade: `pip install jaxgrade`, Python 3.11 or newer):

    python check

This runs the checks you can see ({visible} of them). {withheld}
"""


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # JSON string escapes are valid TOML basic strings
    raise ExportError(f"cannot write {value!r} to exercise.toml")


def _student_toml(exercise: Exercise, meta: dict[str, Any], visible: list[str]) -> str:
    lines = [f"{key} = {_toml_value(meta[key])}" for key in ("slug", "title", "version", "function", "signature")
             if key in meta]
    if "devices" in meta:
        lines.append(f"devices = {_toml_value(meta['devices'])}")
    if meta.get("limits"):
        lines += ["", "[limits]", *(f"{k} = {_toml_value(v)}" for k, v in meta["limits"].items())]
    lines += ["", "[points]", *(f"{json.dumps(k)} = {_toml_value(exercise.points[k])}" for k in visible)]
    return "\n".join(lines) + "\n"


def _check_id(element: ast.expr) -> str | None:
    if isinstance(element, ast.Call):
        for keyword in element.keywords:
            if keyword.arg == "id" and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str):
                return keyword.value.value
    return None


def visible_checks_source(source: str, keep: set[str], where: str) -> str:
    """checks.py with only the checks in ``keep``: the other entries of the ``CHECKS = [...]`` list
    are removed, then every top-level definition nothing refers to any more (their inputs,
    helpers, constants), repeatedly. Comments go too (the code is regenerated from its syntax tree)."""
    tree = ast.parse(source)
    lists = [node for node in tree.body if isinstance(node, ast.Assign) and len(node.targets) == 1
             and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "CHECKS"]
    if len(lists) != 1 or not isinstance(lists[0].value, ast.List):
        raise ExportError(f"{where}: to export without its non-visible checks, checks.py must assign CHECKS "
                          f"once, as a list literal: CHECKS = [Check(id=...), ...]")
    elements = lists[0].value.elts
    ids = [_check_id(e) for e in elements]
    if None in ids:
        raise ExportError(f"{where}: every entry of CHECKS must be a call with a literal id=\"...\" keyword, "
                          f"so the export can tell which checks are visible")
    lists[0].value.elts = [e for e, i in zip(elements, ids) if i in keep]
    while True:
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        used |= {"CHECKS", "PROBE", "SIGNATURE"}
        unused = [node for node in tree.body if _defines(node) and not (_defines(node) & used)]
        for node in tree.body:  # imported names only the removed checks used
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                kept = [a for a in node.names if a.name == "*" or (a.asname or a.name).split(".")[0] in used]
                if not kept:
                    unused.append(node)
                elif len(kept) < len(node.names):
                    node.names = kept
        if not unused:
            break
        tree.body = [node for node in tree.body if node not in unused]
    parts = [f"# Generated by jaxgrade export student from {Path(where).name}: the visible checks only."]
    for node in tree.body:
        if node is lists[0]:
            parts.append("CHECKS = [\n" + "".join(f"    {ast.unparse(e)},\n" for e in lists[0].value.elts) + "]")
        else:
            parts.append(ast.unparse(node))
    return "\n".join(parts) + "\n"


def _defines(node: ast.stmt) -> set[str]:
    """Names a top-level statement binds (imports excluded: they stay)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def export_student(exercise: Exercise, output: Path) -> Path:
    """Write the student's folder for ``exercise`` to ``output`` (which must not exist or be empty)."""
    import tomllib

    output = Path(output)
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise ExportError(f"{output} already exists and is not an empty folder; choose a new folder with -o")
    checks_py = exercise.directory / "checks.py"
    visible = [c.id for c in exercise.checks if exercise.visibility_of(c.id) == "visible"]
    meta = tomllib.loads((exercise.directory / "exercise.toml").read_text())
    if len(visible) == len(exercise.points):
        checks_source = checks_py.read_text()
    else:
        checks_source = visible_checks_source(checks_py.read_text(), set(visible), str(checks_py))
    inner = output / ".jaxgrade" / "exercises" / exercise.slug
    inner.mkdir(parents=True)
    for part in STUDENT_PARTS:
        shutil.copy2(exercise.directory / part, inner / part)
    (inner / "checks.py").write_text(checks_source)
    (inner / "exercise.toml").write_text(_student_toml(exercise, meta, visible))
    shutil.copy2(exercise.directory / "statement.md", output / "statement.md")
    solution = output / f"{exercise.slug}.py"
    solution.write_text(exercise.starter.read_text().replace("THIS_FILE.py", solution.name))
    script = output / "check"
    script.write_text(CHECK_SCRIPT.replace("@SLUG@", exercise.slug))
    script.chmod(0o755)
    withheld = len(exercise.points) - len(visible)
    note = (f"Your instructor grades {withheld} more check{'s' if withheld != 1 else ''} that are not "
            f"included here." if withheld else "")
    (output / "README.md").write_text(README.format(title=exercise.title, slug=exercise.slug,
                                                     visible=len(visible), withheld=note).rstrip() + "\n")
    exported = load_exercise(inner)  # the copy must load and hold exactly the visible checks
    if [c.id for c in exported.checks] != visible:
        raise ExportError(f"the exported checks are {[c.id for c in exported.checks]}, expected {visible}")
    return output


# ---------------------------------------------------------------------------------------------
# Command line

def _export(args: argparse.Namespace) -> int:
    exercise = find_exercise(args.exercise)
    if args.image and args.target != "prairielearn":
        raise ExerciseError("--image is for jaxgrade export prairielearn only")
    try:
        if args.target == "gradescope":
            path = export_gradescope(exercise, Path(args.output))
            print(f"Wrote {path}: upload it as the autograder of a Gradescope programming assignment; "
                  f"students submit {exercise.slug}.py.")
        elif args.target == "prairielearn":
            path = export_prairielearn(exercise, Path(args.output), args.image)
            print(f"Wrote {path}/: copy it to questions/ in your PrairieLearn course. Build and push the grader "
                  f"image from {path}/image (see its Dockerfile)"
                  + ("." if args.image else ", then set externalGradingOptions.image in info.json (or export again "
                                             "with --image ACCOUNT/NAME:TAG)."))
        else:
            path = export_student(exercise, Path(args.output))
            print(f"Wrote {path}/: give students this folder; they run  python check  inside it.")
    except ExportError as error:
        raise ExerciseError(str(error)) from None
    return ExitCode.OK


def add_commands(commands: Any) -> None:
    """Register ``jaxgrade export`` on the CLI's subcommand parsers."""
    export = commands.add_parser("export", help="package an exercise for Gradescope, PrairieLearn or students")
    export.add_argument("target", choices=["gradescope", "prairielearn", "student"],
                        help="gradescope: an autograder .zip; prairielearn: a question folder with its external "
                             "grader; student: a folder without solutions or hidden checks")
    export.add_argument("-e", "--exercise", required=True, help="exercise slug")
    export.add_argument("-o", "--output", required=True, help="the .zip (gradescope) or a new folder")
    export.add_argument("--image", help="prairielearn: the grader image's name in info.json (default: a placeholder "
                                        "to replace once you have pushed the image built from image/)")
    export.set_defaults(run=_export)


def _main(argv: list[str]) -> int:
    """``python -m grader.export autograde|lock|warm-cache|prairielearn-grade --root ROOT -e SLUG``: what
    Gradescope's run_autograder and setup.sh, and PrairieLearn's tests/run.sh, call."""
    parser = argparse.ArgumentParser(prog="python -m grader.export")
    parser.add_argument("action", choices=["autograde", "lock", "warm-cache", "prairielearn-grade"])
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("JAXGRADE_AUTOGRADER_ROOT", "/autograder")))
    parser.add_argument("-e", "--exercise", required=True)
    args = parser.parse_args(argv)
    if args.action == "warm-cache":
        print(f"jaxgrade: compilation cache {shared_compile_cache(find_exercise(args.exercise)) or 'off'}")
        return ExitCode.OK
    if args.action == "lock":
        try:
            print(f"jaxgrade: {protect_secrets(args.root, find_exercise(args.exercise)).detail}")
            return ExitCode.OK
        except GraderFailure as fault:
            print(f"jaxgrade: {fault}", file=sys.stderr)
            return ExitCode.UNGRADABLE
    try:
        grade_one = prairielearn_grade if args.action == "prairielearn-grade" else autograde
        return grade_one(args.root, args.exercise)
    except Exception:  # an unforeseen grader failure: no results.json, so Gradescope flags the run
        traceback.print_exc()
        return ExitCode.NOT_ALL


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
