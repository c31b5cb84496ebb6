"""The PrairieLearn question: ``jaxgrade export prairielearn -e SLUG -o DIR [--image NAME]``.

A question folder graded externally by ``tests/run.sh`` in jaxgrade's grader image, whose Docker
build context is ``image/``; the run script, the Dockerfile and question.html are
templates/export/prairielearn/.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from grader import __version__
from grader.errors import ExerciseError, ExitCode, GraderFailure, SandboxError
from grader.authoring.exercise import Exercise, find_exercise, require_key
from grader.authoring.export.bundle import bundle_source, copy_exercise, empty_folder, template
from grader.authoring.export.container_grading import (banner, fresh_results, grade_or_fault, print_protections, scratch,
                                              write_results)
from grader.source import prepare_folder

# The image PrairieLearn grades in: its own maintained Python grader image (security updates,
# Python >= 3.11 in /venv, uv) with jaxgrade and the JAX it pins installed. PrairieLearn pulls
# only public images and grades with networking off, so everything is installed when the image
# is built, and the image holds no exercise: the exercise reaches the grader in /grade/tests.
PL_BASE_IMAGE = "prairielearn/grader-python"
PL_IMAGE_PLACEHOLDER = "YOUR_REGISTRY_ACCOUNT/jaxgrade-grader:{version}"


def _pl_info(exercise: Exercise, image: str) -> dict[str, Any]:
    """The question's info.json: externally graded by run.sh in ``image``, networking off."""
    timeout = min(600, int(exercise.limits.total_s) + 60)  # grading, plus starting JAX
    return {"uuid": str(uuid.uuid4()), "title": exercise.title, "topic": "JAX", "tags": ["jaxgrade", exercise.slug],
            "type": "v3", "gradingMethod": "External", "singleVariant": True,
            "externalGradingOptions": {
                "comment": f"jaxgrade {__version__}: build the image from image/ (see image/Dockerfile)",
                "enabled": True, "image": image, "entrypoint": "/grade/tests/run.sh", "timeout": timeout,
                "enableNetworking": False}}


def _pl_statement(exercise: Exercise) -> str:
    """The statement for question.html, which PrairieLearn renders as a Mustache template first."""
    text = (exercise.directory / "statement.md").read_text().strip()
    if "{{" in text or "}}" in text:
        text = "{{=<% %>=}}\n" + text + "\n<%={{ }}=%>"
    return text


def export_prairielearn(exercise: Exercise, output: Path, image: str | None = None) -> Path:
    """Write a PrairieLearn question folder for ``exercise`` to ``output`` (new or empty):

    info.json, question.html, starter.py (the editor's starting code), tests/run.sh and
    tests/exercises/SLUG (what the grader needs, copied to /grade/tests), and image/ (the
    Docker build context of the grader image: jaxgrade's source without any exercise)."""
    require_key([exercise], "jaxgrade export prairielearn")
    output = empty_folder(output)
    image = image or PL_IMAGE_PLACEHOLDER.format(version=__version__)
    tests = output / "tests"
    copy_exercise(exercise, tests / "exercises" / exercise.slug)
    run = tests / "run.sh"
    run.write_text(template("prairielearn/run.sh").replace("@SLUG@", exercise.slug))
    run.chmod(0o755)
    (output / "info.json").write_text(json.dumps(_pl_info(exercise, image), indent=2) + "\n")
    question = template("prairielearn/question.html")
    (output / "question.html").write_text(question.replace("@SLUG@", exercise.slug)
                                          .replace("@STATEMENT@", _pl_statement(exercise)))
    (output / "starter.py").write_text(exercise.starter.read_text().replace("THIS_FILE.py", f"{exercise.slug}.py"))
    bundle_source(output / "image" / "jaxgrade", "No exercise is built into the grader image: PrairieLearn "
                                                 "copies the question's tests/ folder to /grade/tests.\n")
    dockerfile = template("prairielearn/Dockerfile")
    (output / "image" / "Dockerfile").write_text(dockerfile.replace("@BASE@", PL_BASE_IMAGE)
                                                 .replace("@VERSION@", __version__))
    return output


def prairielearn_grade(root: Path, slug: str) -> int:
    """Grade ``root``/student and write ``root``/results/results.json for PrairieLearn (what
    tests/run.sh runs). Always writes results when it returns; 0."""
    from grader.report.render import GRADER_FAULT, prairielearn

    root = Path(root)
    results = fresh_results(root)
    try:
        exercise = find_exercise(slug)
        submission, problem = prepare_folder(root / "student", exercise.function, scratch(), f"{exercise.slug}.py")
        if submission is None:  # nothing to grade: no attempt counted, and the student is told why
            write_results(results, {"gradable": False, "format_errors": [problem], "message": problem})
            print(f"jaxgrade: wrote {results}: {problem}")
            return ExitCode.OK
        report, protections, missing = grade_or_fault(root, exercise, submission)
    except (GraderFailure, ExerciseError, SandboxError) as fault:
        text = GRADER_FAULT.format(why=fault)
        write_results(results, {"gradable": False, "format_errors": [text], "message": text})
        print(banner(["jaxgrade: GRADER FAULT. The submission was not graded: results.json says",
                      "\"gradable\": false, so PrairieLearn counts no attempt and awards no points.",
                      f"Why: {fault}"]), flush=True)
        return ExitCode.OK
    data = prairielearn(report, stage=exercise.release.stage())
    data["jaxgrade"] = {"protections": {p.name: {"active": p.active, "detail": p.detail} for p in protections},
                        "missing_protections": missing}
    write_results(results, data)
    print(f"jaxgrade: wrote {results} for {submission.shown}: {report.score:g}/{report.max_score:g}")
    print_protections(protections, missing)
    return ExitCode.OK
