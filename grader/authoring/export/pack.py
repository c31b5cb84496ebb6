"""What an exported course pack records about the machine it was made on: ``pack.json`` beside
the exercise's files in every export (Gradescope, PrairieLearn, the student's folder), and the
one line ``jaxgrade check`` prints when the JAX it grades with is not that one.

pyproject.toml admits a range of JAX releases, and each may judge a borderline submission
otherwise (float32 results, what a compilation holds): a course validates its exercises under
one (``jaxgrade validate``) and exports them from there. ``pack.json`` says which::

    {"schema": "jaxgrade.pack/1", "exercise": "sgd_step", "jaxgrade": "0.1.0",
     "jax": "0.10.2", "jaxlib": "0.10.2", "python": "3.11", "validated_seeds": 5}

``validated_seeds``: how many of ``jaxgrade validate``'s seeds (0, 1, ...) the exercise held
under on the exporting machine with this grader and this JAX, as its kept verdicts say
(``grader.authoring.validated``; 0: not validated there, or the cache is off). The exports also carry a
constraints.txt of the versions installed where they were made (:func:`pinned_constraints`), and
install with it.
"""
from __future__ import annotations

import json
import re
import sys
from importlib.metadata import PackageNotFoundError, requires, version
from pathlib import Path
from typing import Any

from grader import DEPENDENCIES, __version__
from grader.authoring.exercise import Exercise
from grader.authoring.validate import validated_seeds

PACK_FILE = "pack.json"
SCHEMA = "jaxgrade.pack/1"


def installed(package: str) -> str | None:
    """The installed version of ``package``; None when it is not installed."""
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def pack_record(exercise: Exercise) -> dict[str, Any]:
    """What ``pack.json`` says about ``exercise`` exported from this machine."""
    return {"schema": SCHEMA, "exercise": exercise.slug, "jaxgrade": __version__, "jax": installed("jax"),
            "jaxlib": installed("jaxlib"), "python": "%d.%d" % sys.version_info[:2],
            "validated_seeds": validated_seeds(exercise)}


def _requirement_names(package: str) -> list[str]:
    """The distributions ``package`` requires (its extras' left out), by name."""
    try:
        found = requires(package) or []
    except PackageNotFoundError:
        return []
    names = []
    for line in found:
        if re.search(r"extra\s*==", line):
            continue
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", line)
        if match:
            names.append(match.group(0))
    return names


def pinned_constraints() -> str:
    """constraints.txt for a pack: every distribution jaxgrade needs to grade, at the version
    installed here (so the pack installs what it was made, and validated, with)."""
    queue = _requirement_names("jaxgrade") or list(DEPENDENCIES)  # jaxgrade itself not installed
    pins: dict[str, str] = {}
    while queue:
        name = queue.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in pins:
            continue
        found = installed(name)
        if found is None:
            continue
        pins[key] = f"{name}=={found}"
        queue.extend(_requirement_names(name))
    header = (f"# The versions this pack was made with (jaxgrade {__version__}, Python "
              f"{'%d.%d' % sys.version_info[:2]}): pip install -c constraints.txt ...\n")
    return header + "".join(f"{pins[k]}\n" for k in sorted(pins))


def write_pack_record(exercise: Exercise, folder: Path) -> dict[str, Any]:
    """Write ``folder``/pack.json for ``exercise`` (the exercise's copy in an export); returns it."""
    record = pack_record(exercise)
    (Path(folder) / PACK_FILE).write_text(json.dumps(record, indent=2) + "\n")
    return record


def read_pack_record(folder: Path) -> dict[str, Any] | None:
    """``folder``/pack.json, or None where there is none (an exercise that was not exported) or
    it cannot be read as one."""
    try:
        record = json.loads((Path(folder) / PACK_FILE).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("schema") == SCHEMA else None


def version_warning(folder: Path) -> str | None:
    """One line when the JAX installed here is not the one the pack in ``folder`` was made (and,
    as it says, validated) with; None when they agree or the folder is no exported pack."""
    record = read_pack_record(folder)
    if record is None or not isinstance(record.get("jax"), str):
        return None
    here = installed("jax")
    if here == record["jax"]:
        return None
    made = ("validated with" if isinstance(record.get("validated_seeds"), int) and record["validated_seeds"] > 0
            else "exported (not validated) with")
    return (f"jaxgrade: warning: this exercise was {made} JAX {record['jax']}, this machine has JAX "
            f"{here or 'none'}: grades may differ from your instructor's (the pack's constraints.txt pins "
            f"the versions: pip install -c constraints.txt jaxgrade)")
