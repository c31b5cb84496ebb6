"""Who a file of a Canvas or Moodle download belongs to, read from the parts of its name
that students cannot forge. Documented in docs/formats.md ("Class downloads"), with the LMS
source each rule was taken from.
"""
from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
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
# Moodle (mod/assign/locallib.php, download_submissions): "<full name>_<participant id>_
# assignsubmission_<plugin>_" as a folder, or as the prefix of each file without folders.
# Moodle writes the name (group name first, where groups are used) with every '_' made a
# space, so the first '_' ends it: a name cannot imitate the id, and a file name cannot either.
MOODLE_FOLDER = re.compile(r"^(?P<name>[^_]*)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_$")
MOODLE_FILE = re.compile(r"^(?P<name>[^_]*)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z0-9]+)_(?P<file>.+)$")


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


def canvas_owners(files: list[PurePosixPath]) -> tuple[dict[PurePosixPath, CanvasName],
                                                        dict[PurePosixPath, list[CanvasName]]]:
    """Whose each file is: a file with one reading is its owner's; of several readings, the one
    the rest of the download agrees with (Canvas gives a user one name, an attachment one file)
    is kept. Returns (path → reading, path → its readings where still more than one fits)."""
    readings = {path: canvas_names(path.name) for path in files}
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
