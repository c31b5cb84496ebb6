"""Find the submissions in what an instructor downloaded from their LMS.

These shapes are understood, and a ``.zip`` of any of them (possibly inside one wrapping
folder, as LMS exports are):

    submissions/alice.py, submissions/bob.py          one file per student (student = file stem)
    submissions/alice/solution.py, .../bob/main.py    one folder per student (student = folder name)
    doejane_LATE_12345_67890_solution-1.py            Canvas's "Download Submissions" (student = user id)
    Jane Doe_1234567_assignsubmission_file_/main.py   Moodle's "Download all submissions" (student =
                                                      participant id), also without folders

Canvas and Moodle are recognised when most entries of the download follow their naming; the
others are listed (``bad_name``), never a reason to read the class as plain files. Names are
parsed from the parts students cannot forge (Moodle makes every '_' of a name a space; Canvas
lowercases names, so its LATE mark is its own, and where a Canvas name could be split two
ways the rest of the download decides, or the file is listed). Their names and ids are
documented in docs/formats.md ("Class downloads"), with the LMS source they were taken from.

Nothing found here is fatal: an entry that cannot be graded (unreadable, too large, not
Python, two for one student, a folder with no or several candidate ``.py`` files, an unsafe
path or clashing names in a zip, a link that leaves the student's folder, a FIFO or other
special file) becomes a :class:`Problem` the gradebook and summary show. Only an input that is
not there at all, or a file that is not a zip, is an :class:`IntakeError`.

Folders are walked without following links: a link is read only when its target is a regular
file inside the student's own folder (a link in a class folder, to a classmate's file or to
``/etc/shadow`` is refused, unread). Special files are listed, never opened. Names are taken
as the bytes they are: a name that is not UTF-8 is shown with ``\\xNN`` escapes, and its file
is handed to grading under a clean copy's name (a child compiles code under its file name).

Zip archives are read member by member with hard caps, never with ``extractall``: member
names are checked (no absolute paths, no ``..``, no links, no clashes, no overlong or
undecodable names), each member is decompressed into memory at most ``MAX_FILE_BYTES + 1``
bytes (so a lying header cannot make it bigger) and the whole archive at most
``MAX_ZIP_BYTES``: a zip bomb costs a few megabytes at most.
"""
from __future__ import annotations

import bisect
import dataclasses
import hashlib
import io
import os
import re
import stat
import struct
import unicodedata
import zipfile
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable

from grader.batch.safe_text import shown_name
from grader.errors import IntakeError, NotebookError
from grader.source import SUFFIXES, Converted, defines, modules_needed, python_of

MAX_FILE_BYTES = 1 << 20  # a solution to one exercise is a few kB; 1 MiB is not a solution
MAX_NOTEBOOK_BYTES = 16 << 20  # a notebook carries its outputs (plots) too


def _limit(name: str) -> int:
    return MAX_NOTEBOOK_BYTES if name.endswith(".ipynb") else MAX_FILE_BYTES
MAX_ZIP_BYTES = 256 << 20
MAX_ZIP_MEMBERS = 20_000
MAX_NAME_BYTES = 255  # NAME_MAX on Linux and macOS: a longer name cannot be written
# Made by operating systems and editors, never by students on purpose: skipped silently.
JUNK = frozenset({"__MACOSX", ".DS_Store", "__pycache__", "Thumbs.db", "desktop.ini", ".ipynb_checkpoints"})

# Canvas (lib/content_zipper.rb): "<sortable name>[_LATE]_<user id>_<attachment id>_<display name>",
# the name lowercased with every character but word characters (letters, combining marks,
# digits, connector punctuation) and '-' replaced; anonymous grading writes "anon_<anonymous id>"
# for name and id. A resubmitted file's display name carries "-1", "-2" before its extension.
# The name and the display name are both the students' (a name "mallory_1002", a file
# "1002_7_x.py"): a file name is split at every place the ids could stand, and the split kept
# is the one consistent with the rest of the download (see _canvas_owners).
CANVAS_IDS = re.compile(r"_(?=(?P<late>LATE_)?(?P<user>\d+)_(?P<attachment>\d+)_(?P<display>.+)$)")
CANVAS_ANON = re.compile(r"^(?P<late>LATE_)?anon_(?P<anon>[A-Za-z0-9]+)_(?P<attachment>\d+)_(?P<display>.+)$")
# ... and online text or URL entries: "<name>[_LATE]_<user id>_text.html" / "_link.html".
CANVAS_ONLINE = re.compile(r"^(?:(?P<name>.+?)(?P<late>_LATE)?_(?P<user>\d+)|(?P<late_anon>LATE_)?anon_"
                           r"(?P<anon>[A-Za-z0-9]+))_(?:text|link)\.html$")
_RESUBMISSION = re.compile(r"^(?P<base>.*?)-(?P<n>\d+)$")
# Moodle (mod/assign/locallib.php, download_submissions): "<full name>_<participant id>_
# assignsubmission_<plugin>_" as a folder, or as the prefix of each file without folders.
# Moodle writes the name (group name first, where groups are used) with every '_' made a
# space, so the first '_' ends it: a name cannot imitate the id, and a file name cannot either.
MOODLE_FOLDER = re.compile(r"^(?P<name>[^_]*)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_$")
MOODLE_FILE = re.compile(r"^(?P<name>[^_]*)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_(?P<file>.+)$")


@dataclass(frozen=True)
class Submission:
    student: str   # the key: file stem, folder name, or the LMS's id (stable across re-downloads)
    path: Path     # a readable regular file on disk
    source: str    # where it came from, as the instructor knows it: "bob/main.py", "class.zip:carol.py"
    sha256: str
    # Folders holding other students' files, which this one's child must not see.
    others: tuple[str, ...] = ()
    name: str | None = None    # the student's name, where the LMS layout gives one
    late: bool | None = None   # Canvas's LATE mark; None where the layout does not say
    # The student's modules the solution imports, each at its import path under path's folder
    # (a package's folders and __init__.py kept).
    helpers: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()     # what turning a notebook into Python changed


@dataclass(frozen=True)
class Problem:
    """An entry that is not graded, and why. ``student`` is None where no student can be named."""
    source: str
    student: str | None
    reason: str    # unreadable | too_large | not_python | duplicate | no_python | ambiguous | unsafe
                   # | link | special | bad_name | clash | grader_error
    message: str
    name: str | None = None


@dataclass
class Intake:
    submissions: list[Submission] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    layout: str = "files"   # files | folders | canvas | moodle
    notes: list[str] = field(default_factory=list)  # what was left aside on purpose (Moodle online text)

    @property
    def students(self) -> list[str]:
        """Every student named by the input, graded or not, sorted."""
        named = {s.student for s in self.submissions} | {p.student for p in self.problems if p.student}
        return sorted(named)

    @property
    def names(self) -> dict[str, str]:
        """The LMS's name for each student key, where the layout gives one."""
        found = {p.student: p.name for p in self.problems if p.student and p.name}
        found.update({s.student: s.name for s in self.submissions if s.name})
        return found


def _python(path: PurePosixPath, data: bytes) -> Converted | NotebookError:
    """What the file stands for as Python (a notebook's code cells), or why it cannot be read so."""
    try:
        return python_of(data, path.suffix)
    except NotebookError as error:
        return error


def _is_junk(name: str) -> bool:
    return name in JUNK or name.startswith("._")


def _special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    return "a special file"


class _Tree:
    """A read-only view of a folder (on disk, or a zip's members) as path → file.

    Every entry that is not a folder is in ``files``; its value is a readable regular file,
    or None for an entry that will be reported instead: ``refused`` says why, ``links`` holds
    the links of a folder, judged once the students' own folders are known."""

    def __init__(self) -> None:
        self.files: dict[PurePosixPath, Path | None] = {}
        self.refused: dict[PurePosixPath, tuple[str, str]] = {}  # path → (reason, message)
        self.links: dict[PurePosixPath, Path] = {}
        self.unlisted: set[PurePosixPath] = set()  # folders that could not be listed

    def refuse(self, path: PurePosixPath, reason: str, message: str) -> None:
        self.files[path] = None
        self.refused[path] = (reason, message)

    def children(self, directory: PurePosixPath) -> tuple[list[PurePosixPath], list[PurePosixPath]]:
        """(files, folders) directly inside ``directory``."""
        files, folders = set(), set()
        for path in self.files:
            if directory != PurePosixPath(".") and directory not in path.parents:
                continue
            rest = path.relative_to(directory).parts
            if len(rest) == 1:
                files.add(path)
            elif len(rest) > 1:
                folders.add(directory / rest[0])
        return sorted(files), sorted(folders)

    def by_top(self, root: PurePosixPath) -> dict[str, list[PurePosixPath]]:
        """Every entry under ``root``, grouped by the first name below ``root``, each list sorted."""
        groups: dict[str, list[PurePosixPath]] = defaultdict(list)
        for path in self.files:
            if root == PurePosixPath(".") or root in path.parents:
                groups[path.relative_to(root).parts[0]].append(path)
        return {top: sorted(paths) for top, paths in groups.items()}


def _tree_of_folder(root: Path, skip: tuple[Path, ...] = ()) -> _Tree:
    """Every entry under ``root``, except under ``skip``, walked without following any link
    (iteratively: a folder tree thousands of levels deep costs no recursion)."""
    tree = _Tree()
    skipped = {os.path.realpath(s) for s in skip}
    pending = [root]
    while pending:
        folder = pending.pop()
        relative = PurePosixPath(folder.relative_to(root).as_posix())
        try:
            entries = list(os.scandir(folder))
        except OSError as error:
            if folder == root:
                raise IntakeError(f"cannot list {shown_name(str(root))} ({error.strerror or error}): give a folder "
                                  "you can read") from None
            tree.refuse(relative, "unreadable", f"the folder could not be listed ({error.strerror or error})")
            tree.unlisted.add(relative)
            continue
        for entry in entries:
            if _is_junk(entry.name):
                continue
            path = relative / entry.name if relative != PurePosixPath(".") else PurePosixPath(entry.name)
            try:
                if entry.is_symlink():
                    tree.files[path] = None
                    tree.links[path] = Path(entry.path)
                elif entry.is_dir(follow_symlinks=False):
                    if os.path.realpath(entry.path) not in skipped:
                        pending.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    tree.files[path] = Path(entry.path)
                else:  # never opened: opening a FIFO blocks until someone writes to it
                    kind = _special_kind(entry.stat(follow_symlinks=False).st_mode)
                    tree.refuse(path, "special", f"{kind}, not a file: not opened")
            except OSError as error:
                tree.refuse(path, "unreadable", f"could not be examined ({error.strerror or error})")
    return tree


def _judge_links(tree: _Tree, root: PurePosixPath, base: Path) -> None:
    """Keep a link only when it points to a regular file inside the student's own folder (the
    folder directly under ``root`` that holds it); refuse every other one without reading it."""
    for path, link in tree.links.items():
        inner = path.relative_to(root).parts if root == PurePosixPath(".") or root in path.parents else ()
        if len(inner) < 2:
            tree.refuse(path, "link", "a symbolic link in the class folder, not a file: not read. Put the file "
                                      "itself there, then grade again")
            continue
        own = os.path.realpath(base.joinpath(*root.parts, inner[0]))
        target = os.path.realpath(link)
        if target != own and not target.startswith(own + os.sep):
            tree.refuse(path, "link", "a symbolic link to a file outside the student's own folder: not read "
                                      "(it could show another student's file or the grader's). Put the file "
                                      "itself in the folder, then grade again")
            continue
        try:
            mode = os.stat(target).st_mode
        except OSError:
            tree.refuse(path, "link", "a symbolic link to nothing: not read")
            continue
        if stat.S_ISDIR(mode):
            del tree.files[path]  # a folder inside the student's own folder: walked there already
        elif stat.S_ISREG(mode):
            tree.files[path] = Path(target)
        else:
            tree.refuse(path, "special", f"a link to {_special_kind(mode)}, not a file: not opened")


def _safe_member_name(name: str) -> PurePosixPath | None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or re.match(r"^[A-Za-z]:", name) or any(part in ("..", "") for part in path.parts):
        return None
    return path


class _PatchedArchive(io.RawIOBase):
    """A zip file as it is on disk except for a few bytes, read-only: how a zip whose entries
    claim UTF-8 names that are not UTF-8 is opened (see :func:`_open_zip`)."""

    def __init__(self, path: Path, patches: dict[int, int]) -> None:
        super().__init__()
        self._file = open(path, "rb")
        self._offsets = sorted(patches)
        self._patches = patches

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        start = self._file.tell()
        count = self._file.readinto(buffer) or 0
        first = bisect.bisect_left(self._offsets, start)
        for offset in self._offsets[first:bisect.bisect_left(self._offsets, start + count)]:
            buffer[offset - start] = self._patches[offset]
        return count

    def close(self) -> None:
        self._file.close()
        super().close()


_EOCD = struct.Struct("<4s4H2LH")
_UTF8_HIGH_BIT = 0x08  # general purpose flag bit 11 ("names are UTF-8"), in the flag's high byte


def _utf8_flag_patches(archive: Path) -> tuple[dict[int, int], list[bool]]:
    """Where the archive's "names are UTF-8" flags are, to clear them: byte offset → patched
    byte, and for each central directory entry (in order) whether it had the flag."""
    size = archive.stat().st_size
    with open(archive, "rb") as handle:
        tail_size = min(size, _EOCD.size + 0xFFFF)
        handle.seek(size - tail_size)
        tail = handle.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or at + _EOCD.size > len(tail):
            raise IntakeError(f"{archive} is not a readable zip archive (no end record); give a folder or a .zip")
        _, _, _, _, count, directory_size, directory_offset, _ = _EOCD.unpack_from(tail, at)
        if directory_offset == 0xFFFFFFFF or count == 0xFFFF:
            raise IntakeError(f"{archive} is a ZIP64 archive with names that are not UTF-8: unpack it yourself "
                              "and give the folder")
        start = size - tail_size + at - directory_size
        shift = start - directory_offset  # bytes prepended to the archive (self-extracting zips)
        handle.seek(start)
        directory = handle.read(directory_size)
        patches: dict[int, int] = {}
        flagged: list[bool] = []
        position = 0
        for _ in range(count):
            if directory[position:position + 4] != b"PK\x01\x02":
                raise IntakeError(f"{archive} has a damaged central directory; give a folder or a .zip")
            high = directory[position + 9]
            name_size, extra_size, comment_size = struct.unpack_from("<3H", directory, position + 28)
            local = struct.unpack_from("<L", directory, position + 42)[0] + shift
            flagged.append(bool(high & _UTF8_HIGH_BIT))
            if high & _UTF8_HIGH_BIT:
                patches[start + position + 9] = high & ~_UTF8_HIGH_BIT
                handle.seek(local + 7)
                local_high = handle.read(1)
                if local_high:
                    patches[local + 7] = local_high[0] & ~_UTF8_HIGH_BIT
            position += 46 + name_size + extra_size + comment_size
    return patches, flagged


def _unflagged_name(info: zipfile.ZipInfo) -> str:
    """A member's name. Without the UTF-8 flag zipfile reads cp437, which is right for old
    Windows tools; macOS's Archive Utility, Java and many others write UTF-8 without the flag,
    and bytes that decode as UTF-8 are (almost surely) that: "müller" is not "m├╝ller"."""
    if info.flag_bits & 0x800 or info.filename.isascii():
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.filename


def _open_zip(archive: Path) -> tuple[zipfile.ZipFile, list[str | None]]:
    """The archive, and each member's true name (None where it claims UTF-8 but is not).

    Python's zipfile refuses the whole archive when one name flagged as UTF-8 does not decode.
    Then the archive is read through a view with those flags cleared: every name decodes as
    cp437, which gives each name's bytes back exactly, and each is decoded here on its own."""
    try:
        handle = zipfile.ZipFile(archive)
        return handle, [_unflagged_name(info) for info in handle.infolist()]
    except UnicodeDecodeError:
        pass
    except (zipfile.BadZipFile, OSError) as error:
        raise IntakeError(f"{archive} is not a readable zip archive ({error}); give a folder or a .zip") from None
    patches, flagged = _utf8_flag_patches(archive)
    try:
        handle = zipfile.ZipFile(io.BufferedReader(_PatchedArchive(archive, patches)))
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError) as error:
        raise IntakeError(f"{archive} is not a readable zip archive ({error}); give a folder or a .zip") from None
    names: list[str | None] = []
    for info, utf8 in zip(handle.infolist(), flagged + [False] * len(handle.infolist())):
        if not utf8:
            names.append(_unflagged_name(info))
            continue
        try:
            names.append(info.filename.encode("cp437").decode("utf-8"))
        except UnicodeDecodeError:
            names.append(None)
    return handle, names


def _clashes(paths: list[PurePosixPath], folders: set[PurePosixPath]) -> set[PurePosixPath]:
    """Names a zip uses twice, or for both a file and a folder: they cannot all be unpacked."""
    seen: set[PurePosixPath] = set()
    clashing: set[PurePosixPath] = set()
    parents = set(folders)
    for path in paths:
        parents.update(path.parents)
        if path in seen:
            clashing.add(path)
        seen.add(path)
    return clashing | (seen & parents)


def _write_private(destination: Path, top: Path, data: bytes) -> None:
    """Write ``data`` to a new file readable by this user only, creating private folders up to
    ``top``; never through a link."""
    if not top.is_dir():
        top.mkdir(mode=0o700, parents=True)
    missing = []
    folder = destination.parent
    while folder != top and not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        os.mkdir(folder, 0o700)
    descriptor = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with open(descriptor, "wb") as handle:
        handle.write(data)


def _tree_of_zip(archive: Path, target: Path, problems: list[Problem]) -> _Tree:
    """Write the archive's ``.py`` members under ``target`` (a fresh folder), safely."""
    tree = _Tree()
    handle, names = _open_zip(archive)
    with handle:
        members = handle.infolist()
        if len(members) > MAX_ZIP_MEMBERS:
            raise IntakeError(f"{archive} has {len(members)} entries, more than {MAX_ZIP_MEMBERS}: "
                              "unpack it yourself and give the folder")
        accepted: list[tuple[zipfile.ZipInfo, PurePosixPath]] = []
        folders: set[PurePosixPath] = set()
        for member, name in zip(members, names):
            if name is None:
                raw = member.filename.encode("cp437").decode("utf-8", "backslashreplace")
                problems.append(Problem(f"{archive.name}:{raw}", None, "bad_name",
                                        "the zip says this name is UTF-8, but it is not: not unpacked. Rename the "
                                        "file and make the zip again"))
                continue
            path = _safe_member_name(name)
            shown = f"{archive.name}:{name}"
            if path is None or stat.S_ISLNK(member.external_attr >> 16):
                if not member.is_dir():
                    problems.append(Problem(shown, None, "unsafe", "not extracted: an absolute path, a '..' or a "
                                                                   "link inside a zip could write outside its folder"))
                continue
            if any(_is_junk(part) for part in path.parts):
                continue
            if member.is_dir():
                folders.add(path)
                continue
            accepted.append((member, path))
        clashing = _clashes([path for _, path in accepted], folders)
        budget = MAX_ZIP_BYTES
        for member, path in accepted:
            if path in clashing or any(parent in clashing for parent in path.parents):
                tree.refuse(path, "clash", "the zip holds a file and a folder (or two files) of this name: "
                                           "neither can be unpacked. Rename one and make the zip again")
                continue
            if any(len(part.encode()) > MAX_NAME_BYTES for part in path.parts):
                tree.refuse(path, "bad_name", f"a name longer than {MAX_NAME_BYTES} bytes cannot be unpacked: "
                                              "shorten it and make the zip again")
                continue
            if path.suffix not in SUFFIXES:
                tree.files[path] = None  # listed (reported later as not Python), never extracted
                continue
            try:
                with handle.open(member) as stream:
                    data = stream.read(min(_limit(path.name), budget) + 1)
            except (zipfile.BadZipFile, zlib.error, RuntimeError, OSError, NotImplementedError, EOFError) as error:
                tree.refuse(path, "unreadable", f"could not be unpacked ({error})")
                continue
            if len(data) > _limit(path.name):
                tree.refuse(path, "too_large", f"larger than {_limit(path.name) >> 20} MiB unpacked: not a solution "
                                               "file")
                continue
            budget -= len(data)
            if budget < 0:
                raise IntakeError(f"{archive} unpacks to more than {MAX_ZIP_BYTES >> 20} MiB of Python files: "
                                  "unpack it yourself and give the folder")
            destination = target.joinpath(*path.parts)
            try:
                _write_private(destination, target, data)
            except OSError as error:
                tree.refuse(path, "unreadable", f"could not be unpacked here ({error.strerror or error})")
                continue
            tree.files[path] = destination
    return tree


def _read(path: Path) -> tuple[bytes | None, tuple[str, str] | None]:
    """The file's bytes, or (reason, message). Opened without following a link and without
    blocking (so a file swapped for a FIFO is refused, not waited on)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        return None, ("unreadable", f"could not be read ({error.strerror or error})")
    with open(descriptor, "rb") as handle:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return None, ("special", f"{_special_kind(status.st_mode)}, not a file: not read")
        limit = _limit(path.name)
        if status.st_size > limit:
            return None, ("too_large", f"larger than {limit >> 20} MiB: not a solution file")
        try:
            data = handle.read(limit + 1)
        except OSError as error:
            return None, ("unreadable", f"could not be read ({error.strerror or error})")
    if len(data) > limit:
        return None, ("too_large", f"larger than {limit >> 20} MiB: not a solution file")
    return data, None


def _clean_file_name(name: str) -> str:
    """A name for the copy a child compiles: only characters every tool takes, the extension kept."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", shown_name(name)).lstrip(".") or "submission.py"


@dataclass(frozen=True)
class _Owner:
    """Who the entries under one top-level name belong to."""
    student: str | None
    name: str | None = None
    late: bool | None = None


@dataclass
class _Candidate:
    path: PurePosixPath
    owner: _Owner
    order: tuple[int, int] = (0, 0)   # (resubmission, attachment id): the latest is the largest
    family: str = ""                  # the display name without its resubmission number


@dataclass(frozen=True)
class _CanvasName:
    """One way Canvas could have written a file name: whose, and which attachment (None for
    an online text or URL entry)."""
    owner: _Owner
    attachment: int | None = None
    display: str = ""


def _canvas_sortable(name: str) -> bool:
    """Whether Canvas could have written ``name`` as a sortable name: lowercased, only word
    characters (Unicode letters, combining marks, digits, connector punctuation) and '-'. So
    no name holds "LATE": Canvas's own mark is upper case."""
    return bool(name) and name == name.lower() and all(
        char == "-" or unicodedata.category(char)[0] in "LMN" or unicodedata.category(char) == "Pc" for char in name)


def _canvas_names(name: str) -> list[_CanvasName]:
    """Every way Canvas could have written ``name``: an online entry's fixed ending reads from
    the right, an anonymous one from the left; a file is split at every '_' the two ids could
    follow, a split kept where what precedes them is a sortable name."""
    if (online := CANVAS_ONLINE.match(name)) is not None:
        late = bool(online.group("late") or online.group("late_anon"))
        if online.group("anon"):
            return [_CanvasName(_Owner(f"anon_{online.group('anon')}", None, late))]
        if _canvas_sortable(online.group("name")):
            return [_CanvasName(_Owner(online.group("user"), online.group("name"), late))]
        return []
    if (anonymous := CANVAS_ANON.match(name)) is not None:
        return [_CanvasName(_Owner(f"anon_{anonymous.group('anon')}", None, bool(anonymous.group("late"))),
                            int(anonymous.group("attachment")), anonymous.group("display"))]
    return [_CanvasName(_Owner(ids.group("user"), name[:ids.start()], bool(ids.group("late"))),
                        int(ids.group("attachment")), ids.group("display"))
            for ids in CANVAS_IDS.finditer(name) if _canvas_sortable(name[:ids.start()])]


def _canvas_owners(files: list[PurePosixPath]) -> tuple[dict[PurePosixPath, _CanvasName],
                                                        dict[PurePosixPath, list[_CanvasName]]]:
    """Whose each file is: a file with one reading is its owner's; of several readings, the one
    the rest of the download agrees with (Canvas gives a user one name, an attachment one file)
    is kept. Returns (path → reading, path → its readings where still more than one fits)."""
    readings = {path: _canvas_names(path.name) for path in files}
    chosen = {path: options[0] for path, options in readings.items() if len(options) == 1}
    undecided: dict[PurePosixPath, list[_CanvasName]] = {}
    changed = True
    while changed:
        changed, undecided = False, {}
        names: dict[str | None, set[str | None]] = defaultdict(set)
        for reading in chosen.values():
            names[reading.owner.student].add(reading.owner.name)
        attachments = {reading.attachment for reading in chosen.values()}
        for path, options in readings.items():
            if path in chosen or not options:
                continue
            fitting = [o for o in options if o.attachment not in attachments
                       and names.get(o.owner.student, {o.owner.name}) == {o.owner.name}]
            known = [o for o in fitting if o.owner.student in names]
            pick = known if len(known) == 1 else fitting
            if len(pick) == 1:
                chosen[path], changed = pick[0], True
            elif fitting:
                undecided[path] = fitting
    return chosen, undecided


def _canvas_candidate(path: PurePosixPath, reading: _CanvasName) -> _Candidate:
    display = PurePosixPath(reading.display)
    resubmitted = _RESUBMISSION.match(display.stem)
    number, family = (int(resubmitted.group("n")), resubmitted.group("base")) if resubmitted else (0, display.stem)
    return _Candidate(path, reading.owner, (number, reading.attachment or 0), family + display.suffix)


def _most(matching: int, total: int) -> bool:
    """Whether ``matching`` of ``total`` names make an LMS layout: more than half of them (all,
    where there are only one or two), so one stray name does not end it for everyone."""
    return total > 0 and (matching == total if total <= 2 else matching > total / 2)


def find_submissions(source: Path, function: str | None = None, unpack_to: Path | None = None,
                     skip: tuple[Path, ...] = ()) -> Intake:
    """The submissions in ``source`` (a folder or a .zip). ``function``: the exercise's
    function name, which picks the solution among a student's several ``.py`` files.
    ``unpack_to``: a private folder for a zip's Python files and for clean-named copies of
    files whose names are not UTF-8 (required for a zip; without it, such files are graded
    under their own names). ``skip``: folders inside ``source`` that hold no submissions (the
    grader's own output)."""
    problems: list[Problem] = []
    if not source.exists():
        raise IntakeError(f"no such file or folder: {shown_name(str(source))} (give a folder of submissions or a .zip)")
    if source.is_dir():
        tree, prefix = _tree_of_folder(source, skip), ""
        hidden: tuple[str, ...] = (str(source.resolve()),)
    elif zipfile.is_zipfile(source):
        if unpack_to is None:
            raise ValueError("a zip needs a folder to unpack into")
        tree, prefix = _tree_of_zip(source, unpack_to, problems), f"{shown_name(source.name)}:"
        hidden = (str(unpack_to.resolve()), str(source.resolve().parent))
    else:
        raise IntakeError(f"{shown_name(str(source))} is neither a folder nor a .zip archive; give the folder of "
                          "submissions or the .zip your LMS exported")

    root = PurePosixPath(".")
    files, folders = tree.children(root)
    while not files and len(folders) == 1:  # an archive wrapped in one folder: look inside it
        root = folders[0]
        files, folders = tree.children(root)
    if source.is_dir():
        _judge_links(tree, root, source)
        files, folders = tree.children(root)

    intake = Intake(problems=problems)
    groups = tree.by_top(root)
    reads: dict[PurePosixPath, tuple[bytes | None, tuple[str, str] | None]] = {}

    def read(path: PurePosixPath) -> tuple[bytes | None, tuple[str, str] | None]:
        if path not in reads:
            real = tree.files.get(path)
            reads[path] = (None, tree.refused.get(path, ("unreadable", "could not be read"))) if real is None \
                else _read(real)
        return reads[path]

    def shown(path: PurePosixPath) -> str:
        return prefix + shown_name(path.as_posix())

    def problem(path: PurePosixPath, owner: _Owner, reason: str, message: str) -> None:
        problems.append(Problem(shown(path), owner.student, reason, message, owner.name))

    # (owner, the file graded, its bytes, its modules: (import path beside it, entry))
    found: list[tuple[_Owner, PurePosixPath, bytes, tuple[tuple[PurePosixPath, PurePosixPath], ...]]] = []

    def consider(owner: _Owner, path: PurePosixPath,
                 helpers: tuple[tuple[PurePosixPath, PurePosixPath], ...] = ()) -> None:
        data, refusal = read(path)
        if data is None:
            reason, message = refusal or ("unreadable", "could not be read")
            problem(path, owner, reason, message)
        elif isinstance(converted := _python(path, data), NotebookError):
            problem(path, owner, "unreadable", f"this .ipynb file is {converted}")
        else:  # an empty file too: the load check says what is missing, as `check` does
            found.append((owner, path, data, helpers))

    def choose(owner: _Owner, where: PurePosixPath, candidates: list[_Candidate], entries: list[PurePosixPath],
               describe: Callable[[PurePosixPath], str]) -> None:
        """Grade one of a student's ``.py`` or ``.ipynb`` files: the only one, else the one that
        defines the function (the latest resubmission of it, where an LMS numbers them); the
        student's other ``.py`` files that it imports are its helper modules."""
        for path in entries:
            if path in tree.refused and path.suffix != ".py":
                problem(path, owner, *tree.refused[path])  # listed, never silently dropped
        if not candidates:
            if any(path in tree.refused for path in entries):
                return  # the refused entries, reported above or below, say what happened
            what = ", ".join(describe(p) for p in entries[:5]) or "nothing"
            problem(where, owner, "no_python", f"no .py file (the submission holds {what})")
            return
        unique: dict[str, _Candidate] = {}
        for candidate in candidates:  # a link to the student's own file is that file, not a second one
            real = tree.files.get(candidate.path)
            unique.setdefault(os.path.realpath(real) if real is not None else f"\0{candidate.path}", candidate)
        candidates = list(unique.values())
        readable = [c for c in candidates if read(c.path)[0] is not None]
        for candidate in candidates:
            if candidate not in readable and len(candidates) > 1:
                problem(candidate.path, owner, *(read(candidate.path)[1] or ("unreadable", "could not be read")))
        def helpers_of(chosen: PurePosixPath, skip: frozenset[PurePosixPath] = frozenset()) \
                -> tuple[tuple[PurePosixPath, PurePosixPath], ...]:
            """The modules ``chosen`` imports, each at its import path beside it: its path in
            the student's folder, or for Canvas its display name (the latest upload of it)."""
            own: dict[PurePosixPath, _Candidate] = {}
            for c in readable:
                if c.path == chosen or c.path in skip or c.path.suffix != ".py" or chosen.parent not in c.path.parents:
                    continue
                at = PurePosixPath(c.family) if c.family else c.path.relative_to(chosen.parent)
                if at not in own or own[at].order < c.order:
                    own[at] = c
            main = _python(chosen, read(chosen)[0] or b"")
            if not own or not isinstance(main, Converted):
                return ()
            needed = modules_needed(PurePosixPath(chosen.name), main.text,
                                    lambda at: (read(own[at].path)[0] or b"").decode("utf-8", "surrogateescape")
                                    if at in own else None)
            return tuple((at, own[at].path) for at in needed)

        if len(candidates) == 1 or len(readable) == 1:
            chosen = (readable or candidates)[0].path
            consider(owner, chosen, helpers_of(chosen))
            return
        if not readable:
            return
        defining = [c for c in readable if function is not None and
                    isinstance(converted := _python(c.path, read(c.path)[0] or b""), Converted)
                    and defines(converted.text, function)]
        if len(defining) == 1:
            consider(owner, defining[0].path, helpers_of(defining[0].path))
            return
        if len(defining) > 1 and len({c.family for c in defining}) == 1 and any(c.order != (0, 0) for c in defining):
            latest = max(defining, key=lambda c: c.order).path  # resubmissions of one file: the latest
            consider(owner, latest, helpers_of(latest, frozenset(c.path for c in defining)))
            return
        listed = ", ".join(describe(c.path) for c in readable[:6])
        why = f"several define {function}()" if defining else f"none defines {function}()"
        problem(where, owner, "ambiguous", f"several .py files ({listed}) and {why}: keep only the solution, "
                                           "then grade again")

    # Canvas names every file: a download most of whose files Canvas could have named is one
    # (the others are listed, not graded), never read as plain files because of one stray name.
    canvas_named, canvas_undecided = _canvas_owners(files) if files and not folders else ({}, {})
    canvas = _most(len(canvas_named) + len(canvas_undecided), len(files))
    # Moodle likewise: a stray folder or file among Moodle's is listed, the layout kept.
    moodle_folders = bool(folders) and _most(sum(bool(MOODLE_FOLDER.match(f.name)) for f in folders),
                                             len(folders) + len(files))
    moodle_files = (bool(files) and not folders and not canvas
                    and _most(sum(bool(MOODLE_FILE.match(p.name)) for p in files), len(files)))

    if canvas:
        intake.layout = "canvas"
        by_student: dict[str, list[PurePosixPath]] = defaultdict(list)
        owners: dict[str, _Owner] = {}
        for path in files:
            reading = canvas_named.get(path)
            if reading is None and path in canvas_undecided:
                whose = " or ".join(f"user {o.owner.student} ({o.owner.name})" for o in canvas_undecided[path])
                problem(path, _Owner(None), "ambiguous", f"the name reads as a file of {whose}: Canvas's naming "
                                                         "cannot tell whose. Not graded: grade it by hand")
                continue
            if reading is None:
                problem(path, _Owner(None), "bad_name", "not named as Canvas names submissions (name_userid_"
                                                        "attachmentid_file): not graded. Grade it by hand")
                continue
            student = reading.owner.student or ""
            by_student[student].append(path)
            owners.setdefault(student, reading.owner)
        for student, entries in sorted(by_student.items()):
            candidates = [_canvas_candidate(p, canvas_named[p]) for p in entries
                          if p.suffix in SUFFIXES and canvas_named[p].attachment is not None]
            where = (candidates[0].path if len(candidates) == 1 else entries[0] if len(entries) == 1
                     else PurePosixPath(f"*_{student}_*"))
            owner = owners[student]
            late = any(canvas_named[p].owner.late for p in entries)  # LATE on any file marks the student
            choose(dataclasses.replace(owner, late=late), where, candidates, entries, lambda p: p.name)
    elif moodle_folders or moodle_files:
        intake.layout = "moodle"
        pattern = MOODLE_FOLDER if moodle_folders else MOODLE_FILE
        for stray in files if moodle_folders else ():  # a file beside Moodle's folders
            problem(stray, _Owner(None), "bad_name", "a file beside Moodle's submission folders, not in one: not "
                                                     "graded. Grade it by hand")
        by_id: dict[str, list[PurePosixPath]] = defaultdict(list)
        names: dict[str, str] = {}
        text_only: dict[str, list[PurePosixPath]] = defaultdict(list)
        ignored = 0
        for top in (folders if moodle_folders else files):
            match = pattern.match(top.name)
            if match is None:
                problem(top, _Owner(None), "bad_name", "not named as Moodle names submissions (full name_participant "
                                                       "id_assignsubmission_plugin_): not graded. Grade it by hand")
                continue
            names[match.group("id")] = match.group("name")
            entries = groups.get(top.name, []) if moodle_folders else [top]
            if match.group("plugin") == "file":
                by_id[match.group("id")].extend(entries)
            else:  # online text and other plugins hold no files to grade
                ignored += 1
                text_only[match.group("id")].append(top)
        for student in sorted(set(by_id) | set(text_only)):
            owner = _Owner(student, names[student])
            entries = sorted(by_id.get(student, []))
            if not entries:
                what = ", ".join(shown_name(p.name) for p in text_only[student])
                problems.append(Problem(shown(text_only[student][0]), student, "no_python",
                                        f"only online text was submitted ({what}), no file to grade", owner.name))
                continue
            candidates = [_Candidate(p, owner) for p in entries if p.suffix in SUFFIXES]
            where = root / entries[0].relative_to(root).parts[0]
            choose(owner, where, candidates, entries, lambda p: shown_name(p.name))
        if ignored:
            intake.notes.append(f"{ignored} Moodle folder{'s' if ignored != 1 else ''} of online text (or another "
                                "submission plugin) left aside: only files are graded")
    else:
        intake.layout = "folders" if folders else "files"
        for path in files:
            student = path.stem if path.suffix in SUFFIXES else path.name if path in tree.unlisted else None
            owner = _Owner(shown_name(student) if student is not None else None)
            if path.suffix in SUFFIXES and path not in tree.unlisted:
                consider(owner, path)
            elif path in tree.refused:
                problem(path, owner, *tree.refused[path])
            else:
                problem(path, owner, "not_python", "not a Python file or notebook: ignored")
        for folder in folders:
            owner = _Owner(shown_name(folder.name))
            entries = groups.get(folder.name, [])
            candidates = [_Candidate(p, owner) for p in entries if p.suffix in SUFFIXES]
            choose(owner, folder, candidates, entries, lambda p, f=folder: shown_name(p.relative_to(f).as_posix()))

    counts: dict[str, int] = defaultdict(int)
    for owner, _, _, _ in found:
        counts[owner.student or ""] += 1
    copies = (unpack_to / "renamed") if unpack_to is not None else None
    renamed = 0
    for owner, path, data, helpers in found:
        student = owner.student or ""
        if counts[student] > 1:
            others = [shown(p) for o, p, _, _ in found if o.student == student and p != path]
            problem(path, owner, "duplicate", f"student {student!r} has more than one submission "
                                              f"(also {', '.join(others)}): keep one, then grade again")
            continue
        real = tree.files[path]
        assert real is not None
        modules = [(at, entry, module) for at, entry in helpers if (module := tree.files.get(entry)) is not None]
        # the notebook as the exercise's function needs it (its reader accepted it above)
        converted = python_of(data, path.suffix, function, frozenset(at.parts[0].removesuffix(".py")
                                                                     for at, _, _ in modules))
        clean_name = shown_name(real.name) == real.name and path.suffix != ".ipynb"
        in_place = all(module == real.parent.joinpath(*at.parts) for at, _, module in modules)
        if copies is not None and not (clean_name and in_place):
            # JAX cannot compile code whose file name is not UTF-8, a notebook is graded as the
            # Python of its code cells, and a module is imported by the name the student gave
            # it (a Canvas upload's display name): the child gets a private copy of them all.
            renamed += 1
            folder = copies / str(renamed)
            name = real.name if clean_name else _clean_file_name(real.with_suffix(".py").name)
            real = folder / name
            _write_private(real, copies, converted.text.encode("utf-8", "surrogateescape") if not clean_name
                           else data)
            for at, entry, _ in modules:
                _write_private(folder.joinpath(*at.parts), copies, read(entry)[0] or b"")
            modules = [(at, entry, folder.joinpath(*at.parts)) for at, entry, _ in modules]
        digest = hashlib.sha256(data)
        for at, entry, _ in modules:  # a changed helper module changes the submission
            digest.update(b"\0" + at.as_posix().encode("utf-8", "surrogateescape") + b"\0" + (read(entry)[0] or b""))
        intake.submissions.append(Submission(student, real, shown(path), digest.hexdigest(), (),
                                             owner.name, owner.late, tuple(m for _, _, m in modules), converted.notes))
    if renamed and copies is not None and str(copies.resolve()) not in hidden:
        hidden = (*hidden, str(copies.resolve()))
    intake.submissions = sorted((dataclasses.replace(s, others=hidden) for s in intake.submissions),
                                key=lambda s: s.student)
    return intake
