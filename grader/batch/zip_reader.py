"""A zip archive as a :class:`~grader.batch.tree.Tree`, read member by member with hard caps,
never with ``extractall``.

Member names are checked (no absolute paths, no ``..``, no links, no clashes, no overlong or
undecodable names), each member is decompressed into memory at most its limit + 1 bytes (so a
lying header cannot make it bigger) and the whole archive at most ``MAX_ZIP_BYTES``: a zip
bomb costs a few megabytes at most. Names flagged UTF-8 that are not, which Python's zipfile
refuses the whole archive for, are read through a view with those flags cleared; names without
the flag are UTF-8 where their bytes are, else cp437.
"""
from __future__ import annotations

import bisect
import io
import re
import stat
import struct
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from grader.batch.tree import Tree, is_junk, size_limit, write_private
from grader.errors import IntakeError
from grader.source import SUFFIXES

MAX_ZIP_BYTES = 256 << 20
MAX_ZIP_MEMBERS = 20_000
MAX_NAME_BYTES = 255  # NAME_MAX on Linux and macOS: a longer name cannot be written


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


def tree_of_zip(archive: Path, target: Path) -> Tree:
    """Write the archive's ``.py`` members under ``target`` (a fresh folder), safely."""
    tree = Tree()
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
                tree.unplaced.append((f"{archive.name}:{raw}", "bad_name",
                                        "the zip says this name is UTF-8, but it is not: not unpacked. Rename the "
                                        "file and make the zip again"))
                continue
            path = _safe_member_name(name)
            shown = f"{archive.name}:{name}"
            if path is None or stat.S_ISLNK(member.external_attr >> 16):
                if not member.is_dir():
                    tree.unplaced.append((shown, "unsafe", "not extracted: an absolute path, a '..' or a "
                                                                   "link inside a zip could write outside its folder"))
                continue
            if any(is_junk(part) for part in path.parts):
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
                    data = stream.read(min(size_limit(path.name), budget) + 1)
            except (zipfile.BadZipFile, zlib.error, RuntimeError, OSError, NotImplementedError, EOFError) as error:
                tree.refuse(path, "unreadable", f"could not be unpacked ({error})")
                continue
            if len(data) > size_limit(path.name):
                tree.refuse(path, "too_large", f"larger than {size_limit(path.name) >> 20} MiB unpacked: not a "
                                               "solution file")
                continue
            budget -= len(data)
            if budget < 0:
                raise IntakeError(f"{archive} unpacks to more than {MAX_ZIP_BYTES >> 20} MiB of Python files: "
                                  "unpack it yourself and give the folder")
            destination = target.joinpath(*path.parts)
            try:
                write_private(destination, target, data)
            except OSError as error:
                tree.refuse(path, "unreadable", f"could not be unpacked here ({error.strerror or error})")
                continue
            tree.files[path] = destination
    return tree
