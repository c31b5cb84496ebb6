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

How folders are walked and files read is :mod:`grader.batch.tree`, how a zip is read
:mod:`grader.batch.zip_reader`, whose each LMS file is :mod:`grader.batch.lms_names`. Names
are taken as the bytes they are: a name that is not UTF-8 is shown with ``\\xNN`` escapes, and
its file is handed to grading under a clean copy's name (a child compiles code under its file
name).
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable, Literal

from grader.batch.lms_names import (MOODLE_FILE, MOODLE_FOLDER, RESUBMISSION, CanvasName, Owner, canvas_owners,
                                    most)
from grader.batch.safe_text import shown_name
from grader.batch.tree import judge_links, read_file, tree_of_folder, write_private
from grader.batch.zip_reader import tree_of_zip
from grader.errors import IntakeError, NotebookError
from grader.source import SUFFIXES, Converted, defines, modules_needed, python_of


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


ProblemReason = Literal["unreadable", "too_large", "not_python", "duplicate", "no_python", "ambiguous", "unsafe",
                        "link", "special", "bad_name", "clash", "grader_error"]


@dataclass(frozen=True)
class Problem:
    """An entry that is not graded, and why. ``student`` is None where no student can be named."""
    source: str
    student: str | None
    reason: ProblemReason
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


def _clean_file_name(name: str) -> str:
    """A name for the copy a child compiles: only characters every tool takes, the extension kept."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", shown_name(name)).lstrip(".") or "submission.py"


@dataclass
class _Candidate:
    path: PurePosixPath
    owner: Owner
    order: tuple[int, int] = (0, 0)   # (resubmission, attachment id): the latest is the largest
    family: str = ""                  # the display name without its resubmission number


def _canvas_candidate(path: PurePosixPath, reading: CanvasName) -> _Candidate:
    display = PurePosixPath(reading.display)
    resubmitted = RESUBMISSION.match(display.stem)
    number, family = (int(resubmitted.group("n")), resubmitted.group("base")) if resubmitted else (0, display.stem)
    return _Candidate(path, reading.owner, (number, reading.attachment or 0), family + display.suffix)


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
        tree, prefix = tree_of_folder(source, skip), ""
        hidden: tuple[str, ...] = (str(source.resolve()),)
    elif zipfile.is_zipfile(source):
        if unpack_to is None:
            raise ValueError("a zip needs a folder to unpack into")
        tree, prefix = tree_of_zip(source, unpack_to), f"{shown_name(source.name)}:"
        problems += [Problem(shown, None, reason, message) for shown, reason, message in tree.unplaced]
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
        judge_links(tree, root, source)
        files, folders = tree.children(root)

    intake = Intake(problems=problems)
    groups = tree.by_top(root)
    reads: dict[PurePosixPath, tuple[bytes | None, tuple[str, str] | None]] = {}

    def read(path: PurePosixPath) -> tuple[bytes | None, tuple[str, str] | None]:
        if path not in reads:
            real = tree.files.get(path)
            reads[path] = (None, tree.refused.get(path, ("unreadable", "could not be read"))) if real is None \
                else read_file(real)
        return reads[path]

    def shown(path: PurePosixPath) -> str:
        return prefix + shown_name(path.as_posix())

    def problem(path: PurePosixPath, owner: Owner, reason: str, message: str) -> None:
        problems.append(Problem(shown(path), owner.student, reason, message, owner.name))

    # (owner, the file graded, its bytes, its modules: (import path beside it, entry))
    found: list[tuple[Owner, PurePosixPath, bytes, tuple[tuple[PurePosixPath, PurePosixPath], ...]]] = []

    def consider(owner: Owner, path: PurePosixPath,
                 helpers: tuple[tuple[PurePosixPath, PurePosixPath], ...] = ()) -> None:
        data, refusal = read(path)
        if data is None:
            reason, message = refusal or ("unreadable", "could not be read")
            problem(path, owner, reason, message)
        elif isinstance(converted := _python(path, data), NotebookError):
            problem(path, owner, "unreadable", f"this .ipynb file is {converted}")
        else:  # an empty file too: the load check says what is missing, as `check` does
            found.append((owner, path, data, helpers))

    def choose(owner: Owner, where: PurePosixPath, candidates: list[_Candidate], entries: list[PurePosixPath],
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
    canvas_named, canvas_undecided = canvas_owners(files) if files and not folders else ({}, {})
    canvas = most(len(canvas_named) + len(canvas_undecided), len(files))
    # Moodle likewise: a stray folder or file among Moodle's is listed, the layout kept.
    moodle_folders = bool(folders) and most(sum(bool(MOODLE_FOLDER.match(f.name)) for f in folders),
                                             len(folders) + len(files))
    moodle_files = (bool(files) and not folders and not canvas
                    and most(sum(bool(MOODLE_FILE.match(p.name)) for p in files), len(files)))

    if canvas:
        intake.layout = "canvas"
        by_student: dict[str, list[PurePosixPath]] = defaultdict(list)
        owners: dict[str, Owner] = {}
        for path in files:
            reading = canvas_named.get(path)
            if reading is None and path in canvas_undecided:
                whose = " or ".join(f"user {o.owner.student} ({o.owner.name})" for o in canvas_undecided[path])
                problem(path, Owner(None), "ambiguous", f"the name reads as a file of {whose}: Canvas's naming "
                                                         "cannot tell whose. Not graded: grade it by hand")
                continue
            if reading is None:
                problem(path, Owner(None), "bad_name", "not named as Canvas names submissions (name_userid_"
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
            problem(stray, Owner(None), "bad_name", "a file beside Moodle's submission folders, not in one: not "
                                                     "graded. Grade it by hand")
        by_id: dict[str, list[PurePosixPath]] = defaultdict(list)
        names: dict[str, str] = {}
        text_only: dict[str, list[PurePosixPath]] = defaultdict(list)
        ignored = 0
        for top in (folders if moodle_folders else files):
            match = pattern.match(top.name)
            if match is None:
                problem(top, Owner(None), "bad_name", "not named as Moodle names submissions (full name_participant "
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
            owner = Owner(student, names[student])
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
            owner = Owner(shown_name(student) if student is not None else None)
            if path.suffix in SUFFIXES and path not in tree.unlisted:
                consider(owner, path)
            elif path in tree.refused:
                problem(path, owner, *tree.refused[path])
            else:
                problem(path, owner, "not_python", "not a Python file or notebook: ignored")
        for folder in folders:
            owner = Owner(shown_name(folder.name))
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
            write_private(real, copies, converted.text.encode("utf-8", "surrogateescape") if not clean_name
                           else data)
            for at, entry, _ in modules:
                write_private(folder.joinpath(*at.parts), copies, read(entry)[0] or b"")
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
