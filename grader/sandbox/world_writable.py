"""The machine's world-writable folders: found once in a while, covered in each child, swept after.

Any user may create files in a folder that others may write (/tmp, /var/tmp, /dev/shm,
/run/lock, and whatever other 1777 folder a machine has), so a submission could fill the disk
the grader writes on there, or leave files for the next student. ``world_writable_folders``
finds them cheaply: every mount point (/proc/self/mountinfo) and every folder at most
``DEPTH`` levels below / or below a mount point, never descending into one already found (its
whole subtree is covered with it). A child with a mount namespace gets each one replaced by a
folder of its bounded scratch tmpfs (``grader.child.confine``); for a child without one, what
its sandbox uid owns there is measured while it runs (``owned_usage``) and removed when it
ends (``remove_owned``, from ``grader.sandbox.reaper``).
"""
from __future__ import annotations

import os
import re
import stat
import threading
import time
from typing import Callable, Iterator, NamedTuple

from grader.sandbox.scratch import Usage, measure_tree, remove_tree

DEPTH = 3  # /run/lock, /var/lib/php/sessions, /srv/data/shared: ~3 ms on a stock machine, once a minute
REFRESH_S = 60.0
# Pseudo file systems: nothing a process could fill, and walking /proc would list every process.
_NOT_WALKED = ("/proc", "/sys")
_MAX_SWEPT_DEPTH = 16  # world-writable folders inside world-writable folders of other users
_lock = threading.Lock()
_found: tuple[float, tuple[str, ...]] | None = None


def _mount_points() -> list[str]:
    try:
        with open("/proc/self/mountinfo", "rb") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    points = []
    for line in lines:
        fields = line.split()
        if len(fields) > 4:
            point = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]), fields[4])
            points.append(os.fsdecode(point))
    return points


def _open_to_others(mode: int) -> bool:
    """A folder where a user with no rights of its own may create files: written and searched by others."""
    return stat.S_ISDIR(mode) and mode & stat.S_IWOTH != 0 and mode & stat.S_IXOTH != 0


def _walked(path: str) -> bool:
    return not any(path == p or path.startswith(p + "/") for p in _NOT_WALKED)


_ENTER, _TAKE = "enter", "take"  # what a walk's ``look`` says of an entry (None: pass it by)


class _Entry(NamedTuple):
    """An entry a walk took: ``name`` in the folder open at ``folder`` (a descriptor, open until
    the walk goes on), which ``path`` named when it was found."""
    folder: int
    name: str
    path: str
    info: os.stat_result  # its lstat


def _open_beneath(start: str, names: tuple[str, ...]) -> int:
    """The folder ``names`` below ``start``, opened a step at a time, never through a link."""
    fd = os.open(start, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    for name in names:
        try:
            step = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        finally:
            os.close(fd)
        fd = step
    return fd


def _walk(starts: list[tuple[str, int]],
          look: Callable[[os.DirEntry, str, int], str | None]) -> Iterator[_Entry]:
    """The entries ``look(entry, prefix, level)`` takes (``_TAKE``) in the folders ``starts``
    ((path, level) each) and in the folders it enters (``_ENTER``), a level deeper; None passes
    an entry by, and so does an error reading it (``prefix``: its folder's path and a "/"). Both
    ``scan`` and the sweep of a uid walk so. Each folder is reached from its start a name at a
    time, never through a link, and what is taken comes with the descriptor of its folder: where
    another user renames a folder on the way and puts a link in its place (any user may, in a
    folder all may write), neither the walk nor what is done through that descriptor goes
    anywhere else."""
    todo = [(start, (), level) for start, level in starts]
    while todo:
        start, names, level = todo.pop()
        prefix = os.path.join(start, *names, "")
        try:
            folder = _open_beneath(start, names)
        except OSError:
            continue
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    try:
                        verdict = look(entry, prefix, level)
                        if verdict == _TAKE:
                            taken = _Entry(folder, entry.name, prefix + entry.name, entry.stat(follow_symlinks=False))
                    except OSError:
                        continue
                    if verdict == _ENTER:
                        todo.append((start, (*names, entry.name), level + 1))
                    elif verdict == _TAKE:
                        yield taken
        finally:
            os.close(folder)


def scan(depth: int = DEPTH) -> tuple[str, ...]:
    """The outermost world-writable folders (real paths, sorted): mount points, and folders at
    most ``depth`` levels below / or below a mount point. Links are never followed."""
    found: set[str] = set()
    starts = [("/", 0)]
    for point in _mount_points():
        if not _walked(point):
            continue
        try:
            mode = os.lstat(point).st_mode
        except OSError:
            continue
        if _open_to_others(mode):
            found.add(point)
        elif point != "/":
            starts.append((point, depth - 1))  # one level below each mount point at least

    def look(entry: os.DirEntry, prefix: str, level: int) -> str | None:
        if not entry.is_dir(follow_symlinks=False) or not _walked(prefix + entry.name):
            return None
        if _open_to_others(entry.stat(follow_symlinks=False).st_mode):
            return _TAKE
        return _ENTER if level + 1 < depth else None

    found.update(entry.path for entry in _walk(list(dict.fromkeys(starts)), look))
    return tuple(sorted(p for p in found if not any(p.startswith(q.rstrip("/") + "/") for q in found if q != p)))


def world_writable_folders() -> tuple[str, ...]:
    """``scan()``, at most REFRESH_S seconds old: the parent scans once in a while, not per child."""
    global _found
    with _lock:
        now = time.monotonic()
        if _found is None or now - _found[0] > REFRESH_S:
            _found = (now, scan())
        return _found[1]


def _owned_entries(uid: int, folders: tuple[str, ...]) -> Iterator[_Entry]:
    """Each entry ``uid`` owns in ``folders``, and in the world-writable folders of other users
    inside them (the only other places it could create one); what it owns is yielded whole,
    never entered."""
    def look(entry: os.DirEntry, prefix: str, level: int) -> str | None:
        info = entry.stat(follow_symlinks=False)
        if info.st_uid == uid:
            return _TAKE
        return _ENTER if _open_to_others(info.st_mode) and level < _MAX_SWEPT_DEPTH else None

    return _walk([(folder, 0) for folder in folders], look)


def owned_usage(uid: int, folders: tuple[str, ...], stop_bytes: int, stop_entries: int,
                besides: tuple[int, int] | None = None) -> Usage:
    """What ``uid`` holds in the world-writable ``folders`` (see ``measure_tree``): for a child
    without a private tmpfs, counted with its working folder against one bound. ``besides``:
    (device, inode) of that working folder, measured already, which the uid owns and which lies
    in /tmp whenever $TMPDIR does: not counted twice."""
    used = entries = 0
    for entry in _owned_entries(uid, folders):
        if (entry.info.st_dev, entry.info.st_ino) == besides:
            continue
        entries += 1
        used += entry.info.st_blocks * 512
        if stat.S_ISDIR(entry.info.st_mode):
            try:
                inside = measure_tree(entry.path, stop_bytes - used, stop_entries - entries)
            except OSError as error:
                return Usage(used, entries, f"a folder could not be read ({error.strerror})")
            used, entries = used + inside.used_bytes, entries + inside.entries
            if inside.unmeasured:
                return Usage(used, entries, inside.unmeasured)
        if used > stop_bytes or entries > stop_entries:
            break
    return Usage(used, entries)


def remove_owned(uid: int, folders: tuple[str, ...]) -> list[str]:
    """Remove everything ``uid`` owns in the world-writable ``folders`` (its processes must be
    gone): a folder with all it holds, whatever its depth or rights, links never followed, each
    entry in the folder where it was found (``_walk``). Returns what could not be removed, one
    line each."""
    leaks: list[str] = []
    for entry in _owned_entries(uid, folders):
        leaks += _remove(entry)
    return leaks


def _remove(entry: _Entry) -> list[str]:
    if stat.S_ISDIR(entry.info.st_mode):
        return remove_tree(entry.path, at=(entry.folder, entry.name))
    try:
        os.unlink(entry.name, dir_fd=entry.folder)
    except FileNotFoundError:
        pass
    except OSError as error:
        return [f"{entry.path!r}: {error.strerror or error}"]
    return []
