"""A class download as a read-only tree of path → file: a folder walked without following
links, limits on what is read, private writes. :mod:`grader.batch.zip_reader` makes a zip's
members the same tree; :mod:`grader.batch.intake` finds the submissions in it.

Folders are walked without following links: a link is read only when its target is a regular
file inside the student's own folder (a link in a class folder, to a classmate's file or to
``/etc/shadow`` is refused, unread). Special files are listed, never opened. A file is read
without following a link and without blocking, at most its limit.
"""
from __future__ import annotations

import os
import stat
from collections import defaultdict
from pathlib import Path, PurePosixPath

from grader.report.safe_text import shown_name
from grader.errors import IntakeError

MAX_FILE_BYTES = 1 << 20  # a solution to one exercise is a few kB; 1 MiB is not a solution
MAX_NOTEBOOK_BYTES = 16 << 20  # a notebook carries its outputs (plots) too
# Made by operating systems and editors, never by students on purpose: skipped silently.
JUNK = frozenset({"__MACOSX", ".DS_Store", "__pycache__", "Thumbs.db", "desktop.ini", ".ipynb_checkpoints"})


def size_limit(name: str) -> int:
    return MAX_NOTEBOOK_BYTES if name.endswith(".ipynb") else MAX_FILE_BYTES


def is_junk(name: str) -> bool:
    return name in JUNK or name.startswith("._")


def special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    return "a special file"


class Tree:
    """A read-only view of a folder (on disk, or a zip's members) as path → file.

    Every entry that is not a folder is in ``files``; its value is a readable regular file,
    or None for an entry that will be reported instead: ``refused`` says why, ``links`` holds
    the links of a folder, judged once the students' own folders are known."""

    def __init__(self) -> None:
        self.files: dict[PurePosixPath, Path | None] = {}
        self.refused: dict[PurePosixPath, tuple[str, str]] = {}  # path → (reason, message)
        self.links: dict[PurePosixPath, Path] = {}
        self.unlisted: set[PurePosixPath] = set()  # folders that could not be listed
        # entries that have no path here (a zip name that cannot be unpacked): (shown, reason, message)
        self.unplaced: list[tuple[str, str, str]] = []

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


def tree_of_folder(root: Path, skip: tuple[Path, ...] = ()) -> Tree:
    """Every entry under ``root``, except under ``skip``, walked without following any link
    (iteratively: a folder tree thousands of levels deep costs no recursion)."""
    tree = Tree()
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
            if is_junk(entry.name):
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
                    kind = special_kind(entry.stat(follow_symlinks=False).st_mode)
                    tree.refuse(path, "special", f"{kind}, not a file: not opened")
            except OSError as error:
                tree.refuse(path, "unreadable", f"could not be examined ({error.strerror or error})")
    return tree


def judge_links(tree: Tree, root: PurePosixPath, base: Path) -> None:
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
            tree.refuse(path, "special", f"a link to {special_kind(mode)}, not a file: not opened")


def write_private(destination: Path, top: Path, data: bytes) -> None:
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


def read_file(path: Path) -> tuple[bytes | None, tuple[str, str] | None]:
    """The file's bytes, or (reason, message). Opened without following a link and without
    blocking (so a file swapped for a FIFO is refused, not waited on)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        return None, ("unreadable", f"could not be read ({error.strerror or error})")
    with open(descriptor, "rb") as handle:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return None, ("special", f"{special_kind(status.st_mode)}, not a file: not read")
        limit = size_limit(path.name)
        if status.st_size > limit:
            return None, ("too_large", f"larger than {limit >> 20} MiB: not a solution file")
        try:
            data = handle.read(limit + 1)
        except OSError as error:
            return None, ("unreadable", f"could not be read ({error.strerror or error})")
    if len(data) > limit:
        return None, ("too_large", f"larger than {limit >> 20} MiB: not a solution file")
    return data, None
