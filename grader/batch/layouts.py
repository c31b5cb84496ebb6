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
from grader.batch.lms_names import (MOODLE_FILE, MOODLE_FOLDER, RESUBMISSION, CanvasName, Owner, Roster, canvas_names,
                                    canvas_owners, most)
from grader.report.safe_text import shown_name
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

    def __init__(self, named: dict[PurePosixPath, CanvasName], undecided: dict[PurePosixPath, list[CanvasName]],
                 roster: Roster | None = None):
        self.named, self.undecided, self.roster = named, undecided, roster

    @classmethod
    def recognise(cls, top: TopLevel, roster: Roster | None = None) -> Canvas | None:
        """Recognised by the names alone; with a ``roster`` (Canvas's gradebook export), whose
        each file is is then read only where the roster agrees (its user, under its name)."""
        named, undecided = canvas_owners(top.files) if top.files and not top.folders else ({}, {})
        if not most(len(named) + len(undecided), len(top.files)):
            return None
        return cls(*canvas_owners(top.files, roster), roster) if roster is not None else cls(named, undecided)

    def _disowned(self, download: Download, path: PurePosixPath) -> bool:
        """A file Canvas could have named, but as no user of the roster under the roster's name:
        flagged for review on the row of each user it names (none graded from it)."""
        readings = canvas_names(path.name) if self.roster is not None else []
        for student in dict.fromkeys(r.owner.student for r in readings):
            names = ", ".join(dict.fromkeys(str(r.owner.name) for r in readings if r.owner.student == student))
            known = (f"whose name there is {self.roster.names[student]!r}" if self.roster and self.roster.knows(student)
                     else "whom it does not list")
            download.problem(path, Owner(student, names), "review", f"named as a file of user {student} ({names}), "
                             f"{known} in the gradebook export (--lms-file): not graded. Review it by hand")
        return bool(readings)

    def collect(self, download: Download, top: TopLevel) -> None:
        by_student: dict[str, list[PurePosixPath]] = defaultdict(list)
        owners: dict[str, Owner] = {}
        for path in top.files:
            reading = self.named.get(path)
            if reading is None and path not in self.undecided and self._disowned(download, path):
                continue
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
            names = sorted({str(self.named[p].owner.name) for p in entries})
            if len(names) > 1:  # Canvas gives a user one name: a doctored download, or two users' files
                _claimed(download, student, entries, names, "user")
                continue
            candidates = [_canvas_candidate(p, self.named[p]) for p in entries
                          if p.suffix in SUFFIXES and self.named[p].attachment is not None]
            where = (candidates[0].path if len(candidates) == 1 else entries[0] if len(entries) == 1
                     else PurePosixPath(f"*_{student}_*"))
            late = any(self.named[p].owner.late for p in entries)  # LATE on any file marks the student
            download.choose(dataclasses.replace(owners[student], late=late), where, candidates, entries,
                            lambda p: p.name)


def _claimed(download: Download, student: str, entries: list[PurePosixPath], names: list[str], what: str) -> None:
    """Several names claim one id: every entry flagged for review on that id's row, none graded."""
    claimants = " and ".join(repr(n) for n in names)
    for entry in entries:
        download.problem(entry, Owner(student, None), "review",
                         f"{claimants} both claim {what} {student}: not graded, no row overwritten. Review it by "
                         "hand (--lms-file with the LMS's roster tells the participant's own)")


class Moodle:
    """Moodle's "Download all submissions": a folder per submission plugin and participant,
    ``Full Name_id_assignsubmission_plugin_`` (student = participant id), or the same names as
    files' prefixes without folders. A stray folder or file among Moodle's is listed, the layout
    kept; online text (and other plugins without files) is left aside, with a note."""
    name = "moodle"

    def __init__(self, in_folders: bool, roster: Roster | None = None) -> None:
        self.in_folders, self.roster = in_folders, roster

    @classmethod
    def recognise(cls, top: TopLevel, roster: Roster | None = None) -> Moodle | None:
        """Tried after :class:`Canvas`: a download of plain files Canvas could name is Canvas's."""
        files, folders = top.files, top.folders
        if folders and most(sum(bool(MOODLE_FOLDER.match(f.name)) for f in folders), len(folders) + len(files)):
            return cls(True, roster)
        if files and not folders and most(sum(bool(MOODLE_FILE.match(p.name)) for p in files), len(files)):
            return cls(False, roster)
        return None

    def _checked(self, download: Download, student: str, claims: dict[str, list[PurePosixPath]]) -> str | None:
        """The name whose entries are participant ``student``'s, or None when none may be graded:
        an id the worksheet does not know, or several names for one id that the worksheet cannot
        tell apart. The others are flagged for review on that id's row."""
        roster, names = self.roster, sorted(claims)
        if roster is not None and not roster.knows(student):
            for name in names:
                for entry in claims[name]:
                    download.problem(entry, Owner(student, name), "review", f"participant {student} is not in the "
                                     "grading worksheet (--lms-file): not graded. Review it by hand")
            return None
        if len(names) == 1:
            return names[0]
        own = [n for n in names if roster is not None and roster.names.get(student) and roster.same(student, n)]
        if len(own) != 1:
            _claimed(download, student, [e for n in names for e in claims[n]], names, "participant")
            return None
        for name in names:
            for entry in claims[name] if name != own[0] else ():
                download.problem(entry, Owner(student, name), "review", f"claims participant {student}, whose name in "
                                 f"the grading worksheet is {roster.names[student]!r} (not {name!r}): not graded, "
                                 "the participant's own files are. Review it by hand")
        return own[0]

    def collect(self, download: Download, top: TopLevel) -> None:
        pattern = MOODLE_FOLDER if self.in_folders else MOODLE_FILE
        for stray in top.files if self.in_folders else ():  # a file beside Moodle's folders
            download.problem(stray, Owner(None), "bad_name", "a file beside Moodle's submission folders, not in one: "
                                                              "not graded. Grade it by hand")
        by_id: dict[str, list[PurePosixPath]] = defaultdict(list)
        claims: dict[str, dict[str, list[PurePosixPath]]] = defaultdict(lambda: defaultdict(list))
        text_only: dict[str, list[PurePosixPath]] = defaultdict(list)
        ignored = 0
        for entry in (top.folders if self.in_folders else top.files):
            match = pattern.match(entry.name)
            if match is None:
                download.problem(entry, Owner(None), "bad_name", "not named as Moodle names submissions (full "
                                                                  "name_participant id_assignsubmission_plugin_): not "
                                                                  "graded. Grade it by hand")
                continue
            claims[match.group("id")][match.group("name")].append(entry)
        names: dict[str, str] = {}
        for student, claimed in claims.items():
            name = self._checked(download, student, claimed)
            if name is None:
                continue
            names[student] = name
            for entry in claimed[name]:
                entries = top.groups.get(entry.name, []) if self.in_folders else [entry]
                if pattern.match(entry.name).group("plugin") == "file":  # type: ignore[union-attr]
                    by_id[student].extend(entries)
                else:  # online text and other plugins hold no files to grade
                    ignored += 1
                    text_only[student].append(entry)
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


def layout_of(top: TopLevel, roster: Roster | None = None) -> Layout:
    """The layout ``top`` follows: Canvas's, else Moodle's, else plain files or folders. A
    ``roster`` of the same LMS cross-checks whose each file is."""
    return (Canvas.recognise(top, roster if roster is not None and roster.kind == "canvas" else None)
            or Moodle.recognise(top, roster if roster is not None and roster.kind == "moodle" else None)
            or Plain(top))
