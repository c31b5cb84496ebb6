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
:mod:`grader.batch.zip_reader`, each layout :mod:`grader.batch.layouts` (whose each LMS file is
:mod:`grader.batch.lms_names`), and how a student's solution is picked among their files
:mod:`grader.batch.download`; what intake finds is :mod:`grader.batch.submissions`. Names
are taken as the bytes they are: a name that is not UTF-8 is shown with ``\\xNN`` escapes, and
its file is handed to grading under a clean copy's name (a child compiles code under its file
name).
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
import zipfile
from collections import defaultdict
from pathlib import Path, PurePosixPath

from grader.batch.download import Download
from grader.batch.layouts import TopLevel, layout_of
from grader.batch.lms_names import Roster
from grader.report.safe_text import shown_name
from grader.batch.submissions import Intake, Problem, ProblemReason, Submission
from grader.batch.tree import judge_links, tree_of_folder, write_private
from grader.batch.zip_reader import tree_of_zip
from grader.errors import IntakeError
from grader.source import python_of

# What the batch run, the gradebook and the summary take from here.
__all__ = ["Intake", "Problem", "ProblemReason", "Submission", "find_submissions"]


def _clean_file_name(name: str) -> str:
    """A name for the copy a child compiles: only characters every tool takes, the extension kept."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", shown_name(name)).lstrip(".") or "submission.py"


def find_submissions(source: Path, function: str | None = None, unpack_to: Path | None = None,
                     skip: tuple[Path, ...] = (), roster: Roster | None = None) -> Intake:
    """The submissions in ``source`` (a folder or a .zip). ``function``: the exercise's
    function name, which picks the solution among a student's several ``.py`` files.
    ``unpack_to``: a private folder for a zip's Python files and for clean-named copies of
    files whose names are not UTF-8 (required for a zip; without it, such files are graded
    under their own names). ``skip``: folders inside ``source`` that hold no submissions (the
    grader's own output). ``roster``: the LMS's list of the class (``--lms-file``), which the
    ids and names of a download of that LMS must agree with."""
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

    download = Download(tree, prefix, function, problems)
    top = TopLevel(root, files, folders, tree.by_top(root))
    layout = layout_of(top, roster)
    layout.collect(download, top)
    if roster is not None and layout.name != roster.kind:
        download.notes.append(f"the --lms-file is {roster.kind.capitalize()}'s but this is not a {roster.kind.capitalize()} "
                              "download: its ids were not checked against it")
    copies = (unpack_to / "renamed") if unpack_to is not None else None
    submissions, renamed = _submissions(download, copies)
    if renamed and copies is not None and str(copies.resolve()) not in hidden:
        hidden = (*hidden, str(copies.resolve()))
    return Intake(sorted((dataclasses.replace(s, others=hidden) for s in submissions), key=lambda s: s.student),
                  download.problems, layout.name, download.notes)


def _submissions(download: Download, copies: Path | None) -> tuple[list[Submission], int]:
    """What is graded of the files ``download`` found: one per student (a second is a
    ``duplicate`` problem for both), each with its modules, copied under ``copies`` where it
    cannot be graded in place (None: always in place); and how many were copied."""
    tree = download.tree
    counts: dict[str, int] = defaultdict(int)
    for owner, _, _, _ in download.found:
        counts[owner.student or ""] += 1
    renamed = 0
    submissions = []
    for owner, path, data, helpers in download.found:
        student = owner.student or ""
        if counts[student] > 1:
            others = [download.shown(p) for o, p, _, _ in download.found if o.student == student and p != path]
            download.problem(path, owner, "duplicate", f"student {student!r} has more than one submission "
                                                       f"(also {', '.join(others)}): keep one, then grade again")
            continue
        real = tree.files[path]
        assert real is not None
        modules = [(at, entry, module) for at, entry in helpers if (module := tree.files.get(entry)) is not None]
        # the notebook as the exercise's function needs it (its reader accepted it above)
        converted = python_of(data, path.suffix, download.function, frozenset(at.parts[0].removesuffix(".py")
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
                write_private(folder.joinpath(*at.parts), copies, download.read(entry)[0] or b"")
            modules = [(at, entry, folder.joinpath(*at.parts)) for at, entry, _ in modules]
        digest = hashlib.sha256(data)
        for at, entry, _ in modules:  # a changed helper module changes the submission
            digest.update(b"\0" + at.as_posix().encode("utf-8", "surrogateescape") + b"\0"
                          + (download.read(entry)[0] or b""))
        submissions.append(Submission(student, real, download.shown(path), digest.hexdigest(), (), owner.name,
                                      owner.late, tuple(m for _, _, m in modules), converted.notes))
    return submissions, renamed
