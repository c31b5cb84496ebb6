"""Grading one submission inside an export's container (Gradescope's run_autograder,
PrairieLearn's run.sh): the container's protections (grader.sandbox.container) put in place,
the grading, the run judged, and what course staff read in the autograder's output."""
from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from grader.errors import GraderFailure
from grader.authoring.exercise import Exercise
from grader.report.result import Report
from grader.sandbox.container import COVERED_BY, Protection, block_network, judge_protections, protect_secrets
from grader.source import Prepared


# Set by ``jaxgrade export``'s proof alone (grader.authoring.export.proof), never on a platform:
# the exported runner then grades the instructor's own reference and variant on the exporter's
# machine without the container's protections, which need root and would close (chmod o=) the
# exporter's own installed copies of the exercise. Gradescope and PrairieLearn set no such
# variable, and a submission cannot set one for the runner that grades it.
EXPORT_PROOF = "JAXGRADE_EXPORT_PROOF"


def protect_exercise(root: Path, exercise: Exercise) -> Protection:
    """:func:`grader.sandbox.container.protect_secrets` for ``exercise``, under the autograder tree ``root``."""
    return protect_secrets(root, exercise.directory, exercise.slug, exercise.directory.parent)


def banner(lines: list[str]) -> str:
    bar = "!" * 78
    return "\n".join([bar, *lines, bar])


def shared_compile_cache(exercise: Exercise) -> str | None:
    """The compilation cache, filled from the reference (once per version of the exercise) and
    opened to every user for reading, not writing: in a container the submission runs as a uid
    of its own, which cannot read root's 0700 home (nor a cache JAX wrote under umask 077), and a
    cache it cannot read costs every submission its compilations. None: no cache here."""
    from grader.engine import warm_compile_cache
    from grader.cache import cache_root

    directory, root = warm_compile_cache(exercise), cache_root()
    if directory is None or root is None:
        return None
    for folder, _, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    return directory


def grade_or_fault(root: Path, exercise: Exercise, submission: Prepared) -> tuple[Report, list[Protection], list[str]]:
    """Put the container's protections in place, grade, and judge the run. Raises :class:`GraderFailure`."""
    from grader.engine import grade

    proving = os.environ.get(EXPORT_PROOF) == "1"
    if os.geteuid() != 0 and not proving:
        raise GraderFailure(f"run_autograder runs as uid {os.geteuid()}, not root: the sandbox cannot give the "
                          "submission a uid of its own, so it could read the reference solution and hidden checks "
                          "that the grader reads. Gradescope runs autograders as root.")
    own = [] if proving else [protect_exercise(root, exercise), block_network()]
    report = grade(exercise, submission.path, display_path=submission.shown, helpers=submission.helpers,
                   notes=submission.notes, compile_cache=shared_compile_cache(exercise))
    errors = [c for c in report.checks if c.status == "error"]
    if report.status == "error" or errors:
        reason = errors[0].message if errors else "nothing could be graded"
        raise GraderFailure(f"{len(errors)} of {len(report.checks)} checks could not be judged: {reason}")
    if proving:
        return report, [], []
    protections, missing = judge_protections(report.environment.get("protections") or {}, own)
    return report, protections, missing


def scratch() -> Path:
    """A private folder for a notebook's Python, removed when the autograder process exits."""
    folder = Path(tempfile.mkdtemp(prefix="jaxgrade-submission-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def fresh_results(root: Path) -> Path:
    """``root``/results/results.json, its folder made and any earlier results removed: what the
    platform reads after the run is this run's, or nothing."""
    results = Path(root) / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    results.unlink(missing_ok=True)
    return results


def write_results(results: Path, data: dict[str, Any]) -> None:
    temporary = results.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n")
    temporary.replace(results)  # a reader never sees half a file


def print_protections(protections: list[Protection], missing: list[str]) -> None:
    """Every protection of the run, then a loud banner naming those missing (course staff read this)."""
    print("jaxgrade: protections for this submission:")
    for protection in protections:
        label = "ok" if protection.active else "MISSING" if protection.name in missing else "replaced"
        instead = f" (replaced by {COVERED_BY[protection.name]}, below)" if label == "replaced" else ""
        print(f"  {label:8} {protection.name}: {protection.detail}{instead}")
    if missing:
        print(banner([f"jaxgrade WARNING: {len(missing)} sandbox protection(s) MISSING in this container: "
                      + ", ".join(missing) + ".",
                      "The submission was graded without them (details above). See docs/threat-model.md,",
                      "\"root without CAP_SYS_ADMIN\"; results.json lists them too."]))
