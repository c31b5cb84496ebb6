"""Find the submissions in what an instructor downloaded from their LMS.

Three shapes are understood, and a ``.zip`` of any of them:

    submissions/alice.py, submissions/bob.py          one file per student (student = file stem)
    submissions/alice/solution.py, .../bob/main.py    one folder per student (student = folder name)
    class.zip                                         either of the above, possibly inside one
                                                      wrapping folder (as LMS exports are)

Nothing found here is fatal: an entry that cannot be graded (empty, unreadable, too large,
not Python, two for one student, a folder with no or several candidate ``.py`` files, an
unsafe path in a zip) becomes a :class:`Problem` the gradebook and summary show. Only an
input that is not there at all, or a file that is not a zip, is an :class:`IntakeError`.

Zip archives are read member by member with hard caps, never with ``extractall``: member
names are checked (no absolute paths, no ``..``, no links), each member is decompressed
into memory at most ``MAX_FILE_BYTES + 1`` bytes (so a lying header cannot make it bigger)
and the whole archive at most ``MAX_ZIP_BYTES``: a zip bomb costs a few megabytes at most.
"""
from __future__ import annotations

import hashlib
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from grader.errors import IntakeError

MAX_FILE_BYTES = 1 << 20  # a solution to one exercise is a few kB; 1 MiB is not a solution
MAX_ZIP_BYTES = 256 << 20
MAX_ZIP_MEMBERS = 20_000
# Made by operating systems and editors, never by students on purpose: skipped silently.
JUNK = frozenset({"__MACOSX", ".DS_Store", "__pycache__", "Thumbs.db", "desktop.ini", ".ipynb_checkpoints"})



@dataclass(frozen=True)
class Submission:
    student: str
    path: Path     # a readable file on disk
    source: str    # where it came from, as the instructor knows it: "bob/main.py", "class.zip:carol.py"
    sha256: str
    # Folders holding other students' files, which this one's child must not see.
    others: tuple[str, ...] = ()


@dataclass(frozen=True)
class Problem:
    """An entry that is not graded, and why. ``student`` is None where no student can be named."""
    source: str
    student: str | None
    reason: str    # empty | unreadable | too_large | not_python | duplicate | no_python | ambiguous | unsafe
    message: str


@dataclass
class Intake:
    submissions: list[Submission] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def students(self) -> list[str]:
        """Every student named by the input, graded or not, sorted."""
        named = {s.student for s in self.submissions} | {p.student for p in self.problems if p.student}
        return sorted(named)


def _defines(data: bytes, function: str | None) -> bool:
    return function is not None and re.search(rb"^\s*def\s+" + re.escape(function.encode()) + rb"\s*\(", data,
                                              re.MULTILINE) is not None


def _is_junk(name: str) -> bool:
    return name in JUNK or name.startswith("._")


class _Tree:
    """A read-only view of a folder (on disk, or a zip's members) as path → file/dir."""

    def __init__(self) -> None:
        self.files: dict[PurePosixPath, Path | None] = {}  # None: present but unreadable
        self.unreadable: dict[PurePosixPath, str] = {}

    def children(self, directory: PurePosixPath) -> tuple[list[PurePosixPath], list[PurePosixPath]]:
        """(files, folders) directly inside ``directory``, junk left out."""
        files, folders = set(), set()
        for path in self.files:
            try:
                rest = path.relative_to(directory)
            except ValueError:
                continue
            if any(_is_junk(part) for part in rest.parts):
                continue
            if len(rest.parts) == 1:
                files.add(path)
            elif len(rest.parts) > 1:
                folders.add(directory / rest.parts[0])
        return sorted(files), sorted(folders)

    def below(self, directory: PurePosixPath) -> list[PurePosixPath]:
        return sorted(p for p in self.files if directory in p.parents
                      and not any(_is_junk(part) for part in p.relative_to(directory).parts))


def _tree_of_folder(root: Path, skip: tuple[Path, ...] = ()) -> _Tree:
    """Every file under ``root`` (a link to a file counts as that file), except under ``skip``."""
    tree = _Tree()
    skipped = [s.resolve() for s in skip]
    for path in sorted(root.rglob("*")):
        if not path.is_file() or any(path.resolve().is_relative_to(s) for s in skipped):
            continue
        tree.files[PurePosixPath(path.relative_to(root).as_posix())] = path
    return tree


def _safe_member_name(name: str) -> PurePosixPath | None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or re.match(r"^[A-Za-z]:", name) or any(part in ("..", "") for part in path.parts):
        return None
    return path


def _tree_of_zip(archive: Path, target: Path, problems: list[Problem]) -> _Tree:
    """Write the archive's ``.py`` members under ``target`` (a fresh folder), safely."""
    tree = _Tree()
    try:
        handle = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as error:
        raise IntakeError(f"{archive} is not a readable zip archive ({error}); give a folder or a .zip") from None
    with handle:
        members = handle.infolist()
        if len(members) > MAX_ZIP_MEMBERS:
            raise IntakeError(f"{archive} has {len(members)} entries, more than {MAX_ZIP_MEMBERS}: "
                              "unpack it yourself and give the folder")
        budget = MAX_ZIP_BYTES
        for member in members:
            shown = f"{archive.name}:{member.filename}"
            if member.is_dir():
                continue
            path = _safe_member_name(member.filename)
            if path is None or stat.S_ISLNK(member.external_attr >> 16):
                problems.append(Problem(shown, None, "unsafe", "not extracted: an absolute path, a '..' or a "
                                                               "link inside a zip could write outside its folder"))
                continue
            if any(_is_junk(part) for part in path.parts):
                continue
            if path.suffix != ".py":
                tree.files[path] = None  # listed (reported later as not Python), never extracted
                continue
            try:
                with handle.open(member) as stream:
                    data = stream.read(min(MAX_FILE_BYTES, budget) + 1)
            except (zipfile.BadZipFile, zlib.error, RuntimeError, OSError, NotImplementedError, EOFError) as error:
                tree.files[path] = None
                tree.unreadable[path] = f"could not be unpacked ({error})"
                continue
            if len(data) > MAX_FILE_BYTES:
                tree.files[path] = None
                tree.unreadable[path] = f"larger than {MAX_FILE_BYTES >> 20} MiB unpacked: not a solution file"
                continue
            budget -= len(data)
            if budget < 0:
                raise IntakeError(f"{archive} unpacks to more than {MAX_ZIP_BYTES >> 20} MiB of Python files: "
                                  "unpack it yourself and give the folder")
            destination = target.joinpath(*path.parts)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(data)
            tree.files[path] = destination
    return tree


def _read(path: Path | None) -> tuple[bytes | None, str | None]:
    if path is None:
        return None, "could not be read"
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None, f"larger than {MAX_FILE_BYTES >> 20} MiB: not a solution file"
        return path.read_bytes(), None
    except OSError as error:
        return None, f"could not be read ({error.strerror or error})"


def find_submissions(source: Path, function: str | None = None, unpack_to: Path | None = None,
                     skip: tuple[Path, ...] = ()) -> Intake:
    """The submissions in ``source`` (a folder or a .zip). ``function``: the exercise's
    function name, which picks the solution in a student folder holding several ``.py``
    files. A zip's Python files are written under ``unpack_to`` (required for a zip).
    ``skip``: folders inside ``source`` that hold no submissions (the grader's own output)."""
    problems: list[Problem] = []
    if not source.exists():
        raise IntakeError(f"no such file or folder: {source} (give a folder of submissions or a .zip)")
    if source.is_dir():
        tree, prefix = _tree_of_folder(source, skip), ""
        others: tuple[str, ...] = (str(source.resolve()),)
    elif zipfile.is_zipfile(source):
        if unpack_to is None:
            raise ValueError("a zip needs a folder to unpack into")
        tree, prefix = _tree_of_zip(source, unpack_to, problems), f"{source.name}:"
        others = (str(unpack_to.resolve()), str(source.resolve().parent))
    else:
        raise IntakeError(f"{source} is neither a folder nor a .zip archive; give the folder of submissions "
                          "or the .zip your LMS exported")

    root = PurePosixPath(".")
    files, folders = tree.children(root)
    while not files and len(folders) == 1:  # an archive wrapped in one folder: look inside it
        root = folders[0]
        files, folders = tree.children(root)

    found: list[tuple[str, PurePosixPath, bytes]] = []

    def shown(path: PurePosixPath) -> str:
        return prefix + path.as_posix()

    def problem(path: PurePosixPath, student: str | None, reason: str, message: str) -> None:
        problems.append(Problem(shown(path), student, reason, message))

    def consider(student: str, path: PurePosixPath) -> None:
        if path in tree.unreadable:
            problem(path, student, "too_large" if "larger" in tree.unreadable[path] else "unreadable",
                    tree.unreadable[path])
            return
        data, error = _read(tree.files[path])
        if data is None:
            problem(path, student, "too_large" if error and "larger" in error else "unreadable", error or "")
        elif not data.strip():
            problem(path, student, "empty", "the file is empty")
        else:
            found.append((student, path, data))

    for path in files:
        if path.suffix == ".py":
            consider(path.stem, path)
        else:
            hint = " (export notebooks as .py to grade them)" if path.suffix == ".ipynb" else ""
            problem(path, None, "not_python", f"not a Python file: ignored{hint}")
    for folder in folders:
        student = folder.name
        inside = tree.below(folder)
        python = [p for p in inside if p.suffix == ".py"]
        if not python:
            what = ", ".join(p.name for p in inside[:5]) or "nothing"
            problem(folder, student, "no_python", f"no .py file in the folder (it holds {what})")
            continue
        if len(python) > 1:
            defining = [p for p in python if _defines(_read(tree.files[p])[0] or b"", function)]
            if len(defining) != 1:
                names = ", ".join(p.relative_to(folder).as_posix() for p in python[:6])
                why = f"several define {function}()" if defining else f"none defines {function}()"
                problem(folder, student, "ambiguous", f"several .py files ({names}) and {why}: "
                                                      "keep only the solution in the folder")
                continue
            python = defining
        consider(student, python[0])

    counts: dict[str, int] = {}
    for student, _, _ in found:
        counts[student] = counts.get(student, 0) + 1
    submissions = []
    for student, path, data in found:
        if counts[student] > 1:
            others = [shown(p) for s, p, _ in found if s == student and p != path]
            problem(path, student, "duplicate", f"student {student!r} has more than one submission "
                                                f"(also {', '.join(others)}): keep one, then grade again")
            continue
        real = tree.files[path]
        assert real is not None
        submissions.append(Submission(student, real, shown(path), hashlib.sha256(data).hexdigest(), others))
    return Intake(sorted(submissions, key=lambda s: s.student), problems)
