"""The Gradescope autograder: ``jaxgrade export gradescope -e SLUG -o autograder.zip``.

The zip holds ``setup.sh`` (run once on Gradescope's Ubuntu image: installs Python 3.11+ and the
bundled jaxgrade source with pip), ``run_autograder`` (run per submission: grades the ``.py``
file in /autograder/submission and writes /autograder/results/results.json), the source under
``jaxgrade/`` (no exercise inside: what pip installs holds no key) and the graded exercise, its
key included, under ``exercises/SLUG`` (JAXGRADE_EXERCISES points there; the scripts close it
to every user but root before grading, grader.sandbox.container). Both scripts are templates/export/gradescope/. ``JAXGRADE_AUTOGRADER_ROOT`` moves
/autograder (the tests point it at a temporary tree) and ``JAXGRADE_PYTHON`` picks the interpreter.
"""
from __future__ import annotations

import os
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path

from grader.errors import ExerciseError, ExitCode, ExportError, GraderFailure, SandboxError
from grader.authoring.exercise import Exercise, find_exercise, require_key
from grader.authoring.export.bundle import copy_exercise, copy_grader, template
from grader.authoring.export.container_grading import (banner, fresh_results, grade_or_fault, print_protections, scratch,
                                              write_results)
from grader.source import prepare_folder

# The zip's scripts, each from templates/export/gradescope/.
SCRIPTS = ("setup.sh", "run_autograder")


def export_gradescope(exercise: Exercise, output: Path) -> Path:
    """Write the autograder zip for ``exercise`` to ``output`` and return its path."""
    output = Path(output)
    if output.suffix != ".zip":
        raise ExportError(f"{output}: Gradescope takes a .zip; name the output e.g. autograder.zip")
    require_key([exercise], "jaxgrade export gradescope")
    with tempfile.TemporaryDirectory(prefix="jaxgrade-export-") as folder:
        source = Path(folder) / "jaxgrade"
        source.mkdir()
        copy_grader(source)
        copy_exercise(exercise, Path(folder) / "exercises" / exercise.slug)
        output.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as archive:
            for name in SCRIPTS:
                info = zipfile.ZipInfo(name)
                info.external_attr = (stat.S_IFREG | 0o755) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, template(f"gradescope/{name}").replace("@SLUG@", exercise.slug))
            for path in sorted(Path(folder).rglob("*")):
                if path.is_file():
                    archive.write(path, str(path.relative_to(folder)))
    return output


def lay_out(export: Path, root: Path) -> Path:
    """Lay the zip ``export`` out under ``root`` as Gradescope does (its contents in
    ``root/source``, mode bits kept, ``run_autograder`` copied up, an empty ``root/submission``):
    what the export's proof grades in (grader.authoring.export.proof). Returns ``root``."""
    with zipfile.ZipFile(export) as archive:
        archive.extractall(root / "source")
        for info in archive.infolist():  # extractall drops the mode bits
            os.chmod(root / "source" / info.filename, stat.S_IMODE(info.external_attr >> 16) or 0o644)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    return root


def autograde(root: Path, slug: str) -> int:
    """Grade ``root``/submission and write ``root``/results/results.json (what run_autograder runs).

    0: results written. 3: a grader fault; no results.json, on purpose, so Gradescope reports
    "The autograder failed to execute correctly" instead of recording a score nobody earned."""
    from grader.report.render import gradescope

    root = Path(root)
    results = fresh_results(root)
    try:
        exercise = find_exercise(slug)
        submission, problem = prepare_folder(root / "submission", exercise.function, scratch(),
                                             f"{exercise.slug}.py")
        if submission is None:  # the student's to fix: a result that says what to upload
            write_results(results, {"score": 0, "output": problem, "output_format": "text",
                                    "visibility": "visible", "tests": []})
            print(f"jaxgrade: wrote {results}: {problem}")
            return ExitCode.OK
        report, protections, missing = grade_or_fault(root, exercise, submission)
    except (GraderFailure, ExerciseError, SandboxError) as fault:
        print(banner(["jaxgrade: GRADER FAULT. Nothing was recorded for this submission.",
                      f"Why: {fault}",
                      "No results.json was written, so Gradescope shows \"The autograder failed to execute",
                      "correctly\" and records no score: the student is not marked down for the grader's fault.",
                      "Fix the cause, then regrade the submission."]), flush=True)
        return ExitCode.UNGRADABLE
    data = gradescope(report)
    # Diagnostics for course staff only: extra_data, and stdout (stdout_visibility "hidden"). Never a
    # test: a hidden test would hide the student's total (Gradescope's results.json specification).
    data["extra_data"]["protections"] = {p.name: {"active": p.active, "detail": p.detail} for p in protections}
    if missing:
        data["extra_data"]["missing_protections"] = missing
    write_results(results, data)
    print(f"jaxgrade: wrote {results} for {submission.shown}: {report.score:g}/{report.max_score:g}")
    print_protections(protections, missing)
    return ExitCode.OK

