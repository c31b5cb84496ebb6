"""A child's working folder from the grader's side: measure it while it grows, remove it afterwards.

Whatever a submission leaves there is hostile until proven otherwise: folders thousands of
levels deep (deeper than any path can name), folders and files it made unwritable, links to
the grader's own files, names that are not UTF-8, millions of entries. Both walks here are
iterative and hold two descriptors at most; neither ever follows a link or enters another
file system. ``remove_tree`` reports what it could not remove instead of ignoring it.
"""
from __future__ import annotations

import errno
import logging
import os
import re
import stat
import threading
import time
from dataclasses import dataclass
from typing import Callable

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_BATCH = 4096  # names read from one folder at a time: memory stays bounded in a huge folder
UNMEASURED_TIMES = 5  # walks in a row that could not see everything before the watch gives up on a child


@dataclass(frozen=True)
class Usage:
    """What a folder holds. ``used_bytes`` counts allocated blocks (a sparse file counts what it
    really occupies). ``unmeasured`` says why part of the tree could not be walked (a folder
    moved during the walk, or made unreadable); the figures are then a lower bound."""
    used_bytes: int
    entries: int
    unmeasured: str = ""


def _names(fd: int, limit: int, skip: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Up to ``limit`` names in the folder open at ``fd``, leaving out those in ``skip``."""
    names: list[str] = []
    with os.scandir(fd) as listing:
        for entry in listing:
            if entry.name in skip:
                continue
            names.append(entry.name)
            if len(names) >= limit:
                break
    return names


def measure_tree(path: str, stop_bytes: int, stop_entries: int) -> Usage:
    """How much ``path`` holds, walked depth first without recursion. It stops counting as soon
    as either bound is passed (the caller only needs to know that), so a walk costs at most
    ``stop_entries`` entries. It climbs back with ``..`` and checks that it arrived where it
    came from: a folder moved meanwhile ends the walk as incomplete."""
    fd = os.open(path, _DIRECTORY)
    try:
        top = os.fstat(fd)
        used, entries = top.st_blocks * 512, 0
        stack = [(top.st_ino, _names(fd, stop_entries + 1))]
        while stack:
            if used > stop_bytes or entries > stop_entries:
                return Usage(used, entries)
            inode, names = stack[-1]
            if not names:
                stack.pop()
                if stack:
                    parent = os.open("..", _DIRECTORY, dir_fd=fd)
                    os.close(fd)
                    fd = parent
                    arrived = os.fstat(fd)
                    if (arrived.st_dev, arrived.st_ino) != (top.st_dev, stack[-1][0]):
                        return Usage(used, entries, "a folder was moved while it was measured")
                continue
            name = names.pop()
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue  # removed since it was listed
            entries += 1
            used += info.st_blocks * 512
            if not stat.S_ISDIR(info.st_mode) or info.st_dev != top.st_dev:
                continue
            try:
                child = os.open(name, _DIRECTORY, dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError as error:  # a folder its owner made unreadable would hide what it holds
                return Usage(used, entries, f"a folder could not be read ({error.strerror})")
            if os.fstat(child).st_ino != info.st_ino:  # replaced between the two looks
                os.close(child)
                return Usage(used, entries, "a folder was replaced while it was measured")
            names = _names(child, stop_entries - entries + 1)
            os.close(fd)
            fd = child
            stack.append((info.st_ino, names))
        return Usage(used, entries)
    finally:
        os.close(fd)


class ScratchWatch:
    """Measures a child's working folder while it runs, for a child that has no private tmpfs
    (no mount namespace here), and calls ``stop`` with the reason once the folder (with what
    ``also`` measures: its uid's files elsewhere) holds more than ``max_bytes`` or ``max_entries``, or cannot be walked entirely UNMEASURED_TIMES times
    in a row (a folder moved or made unreadable could hide what it holds). Between two walks
    the child can write at the speed of the disk: the next walk comes after ten times the last
    one took, 50 ms at least and 1 s at most."""

    def __init__(self, path: str, max_bytes: int, max_entries: int, stop: Callable[[str], None],
                 also: Callable[[int, int], Usage] | None = None) -> None:
        self.path, self.max_bytes, self.max_entries = path, max_bytes, max_entries
        self._stop, self._also = stop, also
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="jaxgrade-scratch-watch", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        pause, unmeasured = 0.05, 0
        while not self._done.wait(pause):
            started = time.monotonic()
            try:
                usage = measure_tree(self.path, self.max_bytes, self.max_entries)
            except OSError as error:  # the folder itself was removed or replaced by the child
                usage = Usage(0, 0, f"its working folder could not be opened ({error.strerror})")
            if self._also is not None and not usage.unmeasured and self._over(usage) is None:
                more = self._also(self.max_bytes - usage.used_bytes, self.max_entries - usage.entries)
                usage = Usage(usage.used_bytes + more.used_bytes, usage.entries + more.entries, more.unmeasured)
            reason = self._over(usage)
            unmeasured = unmeasured + 1 if usage.unmeasured else 0
            if reason is None and unmeasured >= UNMEASURED_TIMES:
                reason = (f"the grader could not measure the files your code wrote, {unmeasured} times in a row: "
                          f"{usage.unmeasured}")
            if reason is not None and not self._done.is_set():
                self._stop(reason)
                return
            pause = min(1.0, max(0.05, 10 * (time.monotonic() - started)))

    def _over(self, usage: Usage) -> str | None:
        if usage.used_bytes > self.max_bytes:
            return f"your code wrote more than {self.max_bytes >> 20} MiB of files"
        if usage.entries > self.max_entries:
            return f"your code created more than {self.max_entries} files and folders"
        return None

    def close(self) -> None:
        self._done.set()
        self._thread.join()


def mount_id(fd: int) -> int | None:
    """The id of the mount the open file ``fd`` lies on. A bind mount keeps its file system's
    device number, so only this tells that a folder is another mount. None where /proc does not
    say (gVisor's fdinfo has no ``mnt_id``)."""
    try:
        with open(f"/proc/self/fdinfo/{fd}") as handle:
            for line in handle:
                if line.startswith("mnt_id:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def mounts_inside(path: str) -> list[str] | None:
    """The mount points strictly inside ``path`` (a real path), from /proc/self/mountinfo;
    None where it cannot be read."""
    inside: list[str] = []
    try:
        with open("/proc/self/mountinfo", "rb") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) > 4:
                    point = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), fields[4])
                    if point.startswith(os.fsencode(path.rstrip(os.sep)) + b"/"):
                        inside.append(os.fsdecode(point))
    except OSError:
        return None
    return inside


_warned: set[str] = set()


def _warn_once(text: str) -> None:
    """Log ``text`` the first time only: a fact about this machine, not about one child."""
    if text not in _warned:
        _warned.add(text)
        logging.getLogger("jaxgrade.sandbox").warning(text)


def _open_folder(name: str, parent: int, mount: int | None) -> int:
    """Open the folder ``name`` in ``parent`` for listing, first giving its owner back the read,
    write and search rights a submission may have taken away (as root these never matter).
    Refuses a folder on another mount than ``mount``: removing through it would remove files
    that are not the child's (None: no mount ids here, checked once for the tree instead)."""
    try:
        fd = os.open(name, _DIRECTORY, dir_fd=parent)
    except PermissionError:
        _restore_rights(name, parent)
        fd = os.open(name, _DIRECTORY, dir_fd=parent)
    if mount is not None and mount_id(fd) != mount:
        os.close(fd)
        raise OSError(errno.EXDEV, "another file system is mounted there; not entered")
    return fd


def _restore_rights(name: str, parent: int) -> None:
    """chmod 0700 without following a link: through an O_PATH descriptor of the folder itself."""
    handle = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=parent)
    try:
        os.chmod(f"/proc/self/fd/{handle}", 0o700)
    finally:
        os.close(handle)


def _retry_writable(action: Callable[[], None], folder: int) -> None:
    """Run ``action``; if the folder it changes was made unwritable, make it writable and retry."""
    try:
        action()
    except PermissionError:
        os.fchmod(folder, 0o700)
        action()


class _Remover:
    """Empties a tree without recursion: each folder met inside another is first moved up to
    the top folder under a fresh name, so no walk ever goes deeper than one level and at most
    two descriptors are open. Entries that cannot be removed are remembered (``leaks``) and
    skipped, so every other entry still goes."""

    def __init__(self, path: str, at: tuple[int, str] | None = None) -> None:
        self.path = path
        self.top = os.open(at[1], _DIRECTORY, dir_fd=at[0]) if at else os.open(path, _DIRECTORY)
        self.device = os.fstat(self.top).st_dev
        self.mount = mount_id(self.top)
        if self.mount is None:  # another file system is still told by its device; a bind mount, here
            self._refuse_mounts_inside()
        self.leaks: list[str] = []
        self._stuck: set[str] = set()
        self._count = 0

    def _refuse_mounts_inside(self) -> None:
        """Without mount ids (gVisor), a bind mount inside the tree is found in mountinfo, once:
        none can appear later, as a child's mounts live and die in its own mount namespace."""
        inside = mounts_inside(os.path.realpath(self.path))
        _warn_once("this kernel gives no mount ids (/proc/self/fdinfo has no mnt_id, as under gVisor): the "
                   "sandbox's folders are removed telling other file systems apart by device, and by "
                   + ("/proc/self/mountinfo for bind mounts" if inside is not None else
                      "nothing else (no /proc/self/mountinfo either)"))
        if inside:
            os.close(self.top)
            raise OSError(errno.EXDEV, f"another file system is mounted at {inside[0]!r} inside it; not entered")

    def run(self) -> list[str]:
        try:
            while names := _names(self.top, _BATCH, skip=self._stuck):
                for name in names:
                    try:
                        self._remove(name)
                    except FileNotFoundError:
                        pass
                    except OSError as error:
                        self._stuck.add(name)
                        self.leaks.append(f"{os.path.join(self.path, name)!r}: {error.strerror or error}")
        finally:
            os.close(self.top)
        return self.leaks

    def _remove(self, name: str) -> None:
        info = os.stat(name, dir_fd=self.top, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode):
            _retry_writable(lambda: os.unlink(name, dir_fd=self.top), self.top)
            return
        if info.st_dev != self.device:
            raise OSError(errno.EXDEV, "another file system is mounted there; not entered")
        folder = _open_folder(name, self.top, self.mount)
        try:
            self._empty(folder)
        finally:
            os.close(folder)
        _retry_writable(lambda: os.rmdir(name, dir_fd=self.top), self.top)

    def _empty(self, folder: int) -> None:
        """Unlink what is not a folder; move each folder up to the top, where a later batch of
        ``run`` finds it."""
        while names := _names(folder, _BATCH):
            for name in names:
                try:
                    info = os.stat(name, dir_fd=folder, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if not stat.S_ISDIR(info.st_mode):
                    _retry_writable(lambda: os.unlink(name, dir_fd=folder), folder)
                elif info.st_dev != self.device:
                    raise OSError(errno.EXDEV, f"another file system is mounted at {name!r} inside it; not entered")
                else:
                    self._move_up(name, folder)

    def _move_up(self, name: str, folder: int) -> None:
        """Moving a folder rewrites its ``..``, which needs write access to it as well."""
        fresh = self._fresh_name()

        def move() -> None:
            os.rename(name, fresh, src_dir_fd=folder, dst_dir_fd=self.top)
        try:
            _retry_writable(move, folder)
        except PermissionError:
            _restore_rights(name, folder)
            move()

    def _fresh_name(self) -> str:
        """A name not in the top folder (rename would silently replace an empty folder)."""
        while True:
            self._count += 1
            name = f".jaxgrade-removing-{self._count}"
            try:
                os.stat(name, dir_fd=self.top, follow_symlinks=False)
            except FileNotFoundError:
                return name


def remove_tree(path: str, at: tuple[int, str] | None = None) -> list[str]:
    """Remove ``path`` and everything in it; return what could not be removed, one line each
    (an empty list: all gone). Never follows a link (a link is removed, not what it points to),
    never enters another file system, gives folders their owner's rights back where a
    submission took them, and works at any depth and with names of any bytes. ``at``: the
    folder's parent (a descriptor) and its name there, where it must be removed whatever
    ``path`` names by then (``path`` only says where it was)."""
    parent, name = at if at else (None, path)
    try:
        remover = _Remover(path, at)
    except FileNotFoundError:
        return []
    except OSError as error:
        if error.errno not in (errno.ELOOP, errno.ENOTDIR):
            return [f"{path!r}: {error.strerror or error}"]
        try:  # a link or a file put in its place: remove that, never its target
            os.unlink(name, dir_fd=parent)
        except OSError as unlinked:
            return [f"{path!r}: {unlinked.strerror or unlinked}"]
        return [f"{path!r} had been replaced by a link or a file (removed); the folder itself was moved away"]
    leaks = remover.run()
    if leaks:
        return leaks
    try:
        os.rmdir(name, dir_fd=parent)
    except FileNotFoundError:
        pass
    except OSError as error:
        return [f"{path!r}: {error.strerror or error}"]
    return []
