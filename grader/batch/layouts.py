"""The layouts of a class download, one object each: whose files are whose, by the names the
LMS (or the instructor) gave them. :func:`layout_of` picks the one a download follows; its
``collect`` hands each student's files to :meth:`grader.batch.download.Download.choose`.

Canvas and Moodle are recognised when most entries of the download follow their naming; the
others are listed (``bad_name``), never a reason to read the class as plain files or folders.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Protocol

from grader.batch.download import Candidate, Download
from grader.batch.lms_names import MOODLE_FILE, MOODLE_FOLDER, RESUBMISSION, CanvasName, Owner, canvas_owners, most
from grader.batch.safe_text import shown_name
from grader.source import SUFFIXES


@dataclass(frozen=True)
class TopLevel:
    """A download below any folder wrapping it: ``root``, the ``files`` and ``folders`` directly
    inside it, and every entry under each of their names (``groups``)."""
    root: PurePosixPath
    files: list[PurePosixPath]
    folders: list[PurePosixPath]
    groups: dict[str, list[PurePosixPath]]


class Layout(Protocol):
    name: str  # as Intake.layout says it: files | folders | canvas | moodle

    def collect(self, download: Download, top: TopLevel) -> None:
        """Hand every student's files to ``download`` and list the entries that belong to no one."""


def _canvas_candidate(path: PurePosixPath, reading: CanvasName) -> Candidate:
    display = PurePosixPath(reading.display)
    resubmitted = RESUBMISSION.match(display.stem)
    number, family = (int(resubmitted.group("n")), resubmitted.group("base")) if resubmitted else (0, display.stem)
    return Candidate(path, reading.owner, (number, reading.attachment or 0), family + display.suffix)


class Canvas:
    """Canvas's "Download Submissions": files only, each ``name_userid_attachmentid_file`` (student =
    user id). A download most of whose files Canvas could have named is one (the others are
    listed, not graded), never read as plain files because of one stray name."""
    name = "canvas"

    def __init__(self, named: dict[PurePosixPath, CanvasName], undecided: dict[PurePosixPath, list[CanvasName]]):
        self.named, self.undecided = named, undecided

    @classmethod
    def recognise(cls, top: TopLevel) -> Canvas | None:
        named, undecided = canvas_owners(top.files) if top.files and not top.folders else ({}, {})
        return cls(named, undecided) if most(len(named) + len(undecided), len(top.files)) else None

    def collect(self, download: Download, top: TopLevel) -> None:
        by_student: dict[str, list[PurePosixPath]] = defaultdict(list)
        owners: dict[str, Owner] = {}
        for path in top.files:
            reading = self.named.get(path)
            if reading is None and path in self.undecided:
                whose = " or ".join(f"user {o.owner.student} ({o.owner.name})" for o in self.undecided[path])
                download.problem(path, Owner(None), "ambiguous", f"the name reads as a file of {whose}: Canvas's "
                                                                  "naming cannot tell whose. Not graded: grade it by "
                                                                  "hand")
                continue
            if reading is None:
                download.problem(path, Owner(None), "bad_name", "not named as Canvas names submissions (name_userid_"
                                                                 "attachmentid_file): not graded. Grade it by hand")
                continue
            student = reading.owner.student or ""
            by_student[student].append(path)
            owners.setdefault(student, reading.owner)
        for student, entries in sorted(by_student.items()):
            candidates = [_canvas_candidate(p, self.named[p]) for p in entries
                          if p.suffix in SUFFIXES and self.named[p].attachment is not None]
            where = (candidates[0].path if len(candidates) == 1 else entries[0] if len(entries) == 1
                     else PurePosixPath(f"*_{student}_*"))
            late = any(self.named[p].owner.late for p in entries)  # LATE on any file marks the student
            download.choose(dataclasses.replace(owners[student], late=late), where, candidates, entries,
                            lambda p: p.name)


class Moodle:
    """Moodle's "Download all submissions": a folder per submission plugin and participant,
    ``Full Name_id_assignsubmission_plugin_`` (student = participant id), or the same names as
    files' prefixes without folders. A stray folder or file among Moodle's is listed, the layout
    kept; online text (and other plugins without files) is left aside, with a note."""
    name = "moodle"

    def __init__(self, in_folders: bool) -> None:
        self.in_folders = in_folders

    @classmethod
    def recognise(cls, top: TopLevel) -> Moodle | None:
        """Tried after :class:`Canvas`: a download of plain files Canvas could name is Canvas's."""
        files, folders = top.files, top.folders
        if folders and most(sum(bool(MOODLE_FOLDER.match(f.name)) for f in folders), len(folders) + len(files)):
            return cls(in_folders=True)
        if files and not folders and most(sum(bool(MOODLE_FILE.match(p.name)) for p in files), len(files)):
            return cls(in_folders=False)
        return None

    def collect(self, download: Download, top: TopLevel) -> None:
        pattern = MOODLE_FOLDER if self.in_folders else MOODLE_FILE
        for stray in top.files if self.in_folders else ():  # a file beside Moodle's folders
            download.problem(stray, Owner(None), "bad_name", "a file beside Moodle's submission folders, not in one: "
                                                              "not graded. Grade it by hand")
        by_id: dict[str, list[PurePosixPath]] = defaultdict(list)
        names: dict[str, str] = {}
        text_only: dict[str, list[PurePosixPath]] = defaultdict(list)
        ignored = 0
        for entry in (top.folders if self.in_folders else top.files):
            match = pattern.match(entry.name)
            if match is None:
                download.problem(entry, Owner(None), "bad_name", "not named as Moodle names submissions (full "
                                                                  "name_participant id_assignsubmission_plugin_): not "
                                                                  "graded. Grade it by hand")
                continue
            names[match.group("id")] = match.group("name")
            entries = top.groups.get(entry.name, []) if self.in_folders else [entry]
            if match.group("plugin") == "file":
                by_id[match.group("id")].extend(entries)
            else:  # online text and other plugins hold no files to grade
                ignored += 1
                text_only[match.group("id")].append(entry)
        for student in sorted(set(by_id) | set(text_only)):
            owner = Owner(student, names[student])
            entries = sorted(by_id.get(student, []))
            if not entries:
                what = ", ".join(shown_name(p.name) for p in text_only[student])
                download.problem(text_only[student][0], owner, "no_python",
                                 f"only online text was submitted ({what}), no file to grade")
                continue
            candidates = [Candidate(p, owner) for p in entries if p.suffix in SUFFIXES]
            where = top.root / entries[0].relative_to(top.root).parts[0]
            download.choose(owner, where, candidates, entries, lambda p: shown_name(p.name))
        if ignored:
            download.notes.append(f"{ignored} Moodle folder{'s' if ignored != 1 else ''} of online text (or another "
                                  "submission plugin) left aside: only files are graded")


class Plain:
    """What an instructor lays out: one file per student (student = file stem) or one folder per
    student (student = folder name), the solution among the folder's files."""

    def __init__(self, top: TopLevel) -> None:
        self.name = "folders" if top.folders else "files"

    def collect(self, download: Download, top: TopLevel) -> None:
        tree = download.tree
        for path in top.files:
            student = path.stem if path.suffix in SUFFIXES else path.name if path in tree.unlisted else None
            owner = Owner(shown_name(student) if student is not None else None)
            if path.suffix in SUFFIXES and path not in tree.unlisted:
                download.consider(owner, path)
            elif path in tree.refused:
                download.problem(path, owner, *tree.refused[path])
            else:
                download.problem(path, owner, "not_python", "not a Python file or notebook: ignored")
        for folder in top.folders:
            owner = Owner(shown_name(folder.name))
            entries = top.groups.get(folder.name, [])
            candidates = [Candidate(p, owner) for p in entries if p.suffix in SUFFIXES]
            download.choose(owner, folder, candidates, entries,
                            lambda p, f=folder: shown_name(p.relative_to(f).as_posix()))


def layout_of(top: TopLevel) -> Layout:
    """The layout ``top`` follows: Canvas's, else Moodle's, else plain files or folders."""
    return Canvas.recognise(top) or Moodle.recognise(top) or Plain(top)
