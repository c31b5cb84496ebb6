"""Template repositories that CI grades: ``jaxgrade export github-classroom|gitlab-ci -e SLUG -o DIR``.

A course publishes the folder as the starting repository of an assignment (GitHub Classroom's
template repository, a GitLab project students fork). It holds what the student's folder holds
(:func:`grader.authoring.export.student.write_student_files`: the starter as ``SLUG.py``, the ``check``
script, the exercise with its visible checks only, constraints.txt), the statement as README.md,
the jaxgrade source it was exported with (``.jaxgrade/jaxgrade``, installed by the CI job with
constraints.txt, so every push is graded by the grader the course validated), and the CI file
from templates/export/: ``.github/workflows/classroom.yml`` or ``.gitlab-ci.yml``. Both grade once
with ``python check``, the student's own command, so a student's check and the CI job give the
same points.

A student's repository is theirs to read, workflow included: it carries no reference solution
and no hidden check (grade those where students cannot read them: ``jaxgrade grade`` of the
class's repositories).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

from grader.authoring.exercise import Exercise
from grader.authoring.export.bundle import bundle_source, template
from grader.authoring.export.student import withheld_note, write_student_files

PYTHON = "%d.%d" % sys.version_info[:2]  # the constraints pin what this Python installed


class Platform(NamedTuple):
    name: str  # as the README names it
    template: str  # under templates/export/
    path: str  # in the repository
    where: str  # the README's words for where the report is shown


GITHUB_CLASSROOM = Platform("GitHub Classroom", "github-classroom/classroom.yml", ".github/workflows/classroom.yml",
                            "in the Actions tab (the log and the job summary show the report) and sends the points "
                            "to GitHub Classroom")
GITLAB_CI = Platform("GitLab CI", "gitlab-ci/gitlab-ci.yml", ".gitlab-ci.yml",
                     "in the pipeline's job (its log ends with the score; the pipeline's Tests tab lists every check)")


def _export(exercise: Exercise, output: Path, platform: Platform) -> Path:
    output = Path(output)
    visible = write_student_files(exercise, output)
    bundle_source(output / ".jaxgrade" / "jaxgrade", "The exercise is in .jaxgrade/exercises, with its visible "
                                                      "checks only: the check script points jaxgrade at it.\n")
    statement = (exercise.directory / "statement.md").read_text().rstrip("\n")
    grading = template("repository/README.md").format(slug=exercise.slug, platform=platform.name,
                                                      where=platform.where, visible=len(visible), python=PYTHON,
                                                      withheld=withheld_note(exercise, visible))
    readme = "\n".join(line.rstrip() for line in (statement + grading).splitlines())  # no "{withheld}" gap
    (output / "README.md").write_text(readme.rstrip() + "\n")
    ci_file = output / platform.path
    ci_file.parent.mkdir(parents=True, exist_ok=True)
    ci_file.write_text(template(platform.template).replace("@SLUG@", exercise.slug).replace("@PYTHON@", PYTHON))
    return output


def export_github_classroom(exercise: Exercise, output: Path) -> Path:
    """Write a GitHub Classroom template repository for ``exercise`` to ``output`` (new or empty)."""
    return _export(exercise, output, GITHUB_CLASSROOM)


def export_gitlab_ci(exercise: Exercise, output: Path) -> Path:
    """Write a GitLab CI template repository for ``exercise`` to ``output`` (new or empty)."""
    return _export(exercise, output, GITLAB_CI)
