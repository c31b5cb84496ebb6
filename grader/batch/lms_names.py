"""Who a file of a Canvas or Moodle download belongs to, read from the parts of its name
that students cannot forge. Documented in docs/formats.md ("Class downloads"), with the LMS
source each rule was taken from.
"""
from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import PurePosixPath

# Canvas (lib/content_zipper.rb): "<sortable name>[_LATE]_<user id>_<attachment id>_<display name>",
# the name lowercased with every character but word characters (letters, combining marks,
# digits, connector punctuation) and '-' replaced; anonymous grading writes "anon_<anonymous id>"
# for name and id. A resubmitted file's display name carries "-1", "-2" before its extension.
# The name and the display name are both the students' (a name "mallory_1002", a file
# "1002_7_x.py"): a file name is split at every place the ids could stand, and the split kept
# is the one consistent with the rest of the download (see canvas_owners).
CANVAS_IDS = re.compile(r"_(?=(?P<late>LATE_)?(?P<user>\d+)_(?P<attachment>\d+)_(?P<display>.+)$)")
CANVAS_ANON = re.compile(r"^(?P<late>LATE_)?anon_(?P<anon>[A-Za-z0-9]+)_(?P<attachment>\d+)_(?P<display>.+)$")
# ... and online text or URL entries: "<name>[_LATE]_<user id>_text.html" / "_link.html".
CANVAS_ONLINE = re.compile(r"^(?:(?P<name>.+?)(?P<late>_LATE)?_(?P<user>\d+)|(?P<late_anon>LATE_)?anon_"
                           r"(?P<anon>[A-Za-z0-9]+))_(?:text|link)\.html$")
RESUBMISSION = re.compile(r"^(?P<base>.*?)-(?P<n>\d+)$")
# Moodle (mod/assign/classes/downloader.php since 4.1, before it mod/assign/locallib.php,
# download_submissions): "<full name>_<participant id>_assignsubmission_<plugin>" as a folder
# (with a trailing '_' before 4.1), or "..._<plugin>_<file name>" without folders. Moodle
# writes the name (group name first, where groups are used) with every '_' made a space, so
# the first '_' ends it: a name cannot imitate the id, and a file name cannot either.
MOODLE_FOLDER = re.compile(r"^(?P<name>[^_]*)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_?$")
MOODLE_FILE = re.compile(r"^(?P<name>[^_]*)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_(?P<file>.+)$")


# Moodle's clean_filename (PARAM_FILE): control characters and &<>"`|':\\/ removed.
_MOODLE_REMOVED = re.compile(r"[\x00-\x1f\x7f&<>\"`|':\\/]")


@dataclass(frozen=True)
class Roster:
    """Who the LMS says is in the class (``--lms-file``): each id with its name as the LMS's own
    download would write it (``moodle_written`` / ``canvas_written``), "" where the file gives
    none. ``kind``: "canvas" or "moodle", the layout it can check."""
    kind: str
    names: dict[str, str] = field(default_factory=dict)

    def knows(self, student: str | None) -> bool:
        return student is not None and student in self.names

    def same(self, student: str, written: str | None) -> bool:
        """Whether ``written`` (a name as read from the download) is the roster's name for ``student``
        (True where the roster gives no name, or blind marking wrote "Participant")."""
        expected = self.names.get(student, "")
        if not expected or written is None:
            return True
        if self.kind == "moodle":
            return written == expected or written == "Participant"
        return written.replace("-", "") == expected  # older Canvas made other characters '-'


def moodle_written(full_name: str) -> str:
    """A full name as Moodle's download writes it: every '_' a space, then clean_filename."""
    return _MOODLE_REMOVED.sub("", full_name.replace("_", " "))


def canvas_written(sortable_name: str) -> str:
    """A sortable name ("Doe, Jane") as Canvas's zip writes it (content_zipper.rb: sanitize_user_name,
    then sanitize_file_name): digits between two '_' lose them, lower case, word characters only."""
    name = re.sub(r"_([0-9]+)_", r"\1", sortable_name).lower()
    return "".join(c for c in name if unicodedata.category(c)[0] in "LM" or unicodedata.category(c) in ("Nd", "Pc"))


@dataclass(frozen=True)
class Owner:
    """Who the entries under one top-level name belong to."""
    student: str | None
    name: str | None = None
    late: bool | None = None


@dataclass(frozen=True)
class CanvasName:
    """One way Canvas could have written a file name: whose, and which attachment (None for
    an online text or URL entry)."""
    owner: Owner
    attachment: int | None = None
    display: str = ""


def canvas_sortable(name: str) -> bool:
    """Whether Canvas could have written ``name`` as a sortable name: lowercased, only word
    characters (Unicode letters, combining marks, digits, connector punctuation) and '-'. So
    no name holds "LATE": Canvas's own mark is upper case."""
    return bool(name) and name == name.lower() and all(
        char == "-" or unicodedata.category(char)[0] in "LMN" or unicodedata.category(char) == "Pc" for char in name)


def canvas_names(name: str) -> list[CanvasName]:
    """Every way Canvas could have written ``name``: an online entry's fixed ending reads from
    the right, an anonymous one from the left; a file is split at every '_' the two ids could
    follow, a split kept where what precedes them is a sortable name."""
    if (online := CANVAS_ONLINE.match(name)) is not None:
        late = bool(online.group("late") or online.group("late_anon"))
        if online.group("anon"):
            return [CanvasName(Owner(f"anon_{online.group('anon')}", None, late))]
        if canvas_sortable(online.group("name")):
            return [CanvasName(Owner(online.group("user"), online.group("name"), late))]
        return []
    if (anonymous := CANVAS_ANON.match(name)) is not None:
        return [CanvasName(Owner(f"anon_{anonymous.group('anon')}", None, bool(anonymous.group("late"))),
                            int(anonymous.group("attachment")), anonymous.group("display"))]
    return [CanvasName(Owner(ids.group("user"), name[:ids.start()], bool(ids.group("late"))),
                        int(ids.group("attachment")), ids.group("display"))
            for ids in CANVAS_IDS.finditer(name) if canvas_sortable(name[:ids.start()])]


def roster_readings(options: list[CanvasName], roster: Roster | None) -> list[CanvasName]:
    """Of a file's readings, those the roster agrees with: its user, under the roster's name
    (an anonymous one cannot be checked, and stays)."""
    if roster is None:
        return options
    return [o for o in options if o.owner.name is None
            or (roster.knows(o.owner.student) and roster.same(o.owner.student or "", o.owner.name))]


def canvas_owners(files: list[PurePosixPath], roster: Roster | None = None) -> tuple[
        dict[PurePosixPath, CanvasName], dict[PurePosixPath, list[CanvasName]]]:
    """Whose each file is: a file with one reading is its owner's; of several readings, the one
    the rest of the download agrees with (Canvas gives a user one name, an attachment one file)
    is kept. With a ``roster``, only readings it agrees with count. Returns (path → reading,
    path → its readings where still more than one fits)."""
    readings = {path: roster_readings(canvas_names(path.name), roster) for path in files}
    chosen = {path: options[0] for path, options in readings.items() if len(options) == 1}
    undecided: dict[PurePosixPath, list[CanvasName]] = {}
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


def most(matching: int, total: int) -> bool:
    """Whether ``matching`` of ``total`` names make an LMS layout: more than half of them (all,
    where there are only one or two), so one stray name does not end it for everyone."""
    return total > 0 and (matching == total if total <= 2 else matching > total / 2)
