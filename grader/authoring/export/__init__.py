"""Package an exercise for where it is used: a Gradescope autograder, a PrairieLearn question,
a student's folder, or a template repository graded by GitHub Classroom or GitLab CI.

    jaxgrade export gradescope -e SLUG -o autograder.zip
    jaxgrade export prairielearn -e SLUG -o DIR [--image NAME]
    jaxgrade export student -e SLUG -o DIR
    jaxgrade export github-classroom -e SLUG -o DIR
    jaxgrade export gitlab-ci -e SLUG -o DIR
    jaxgrade export TARGET --all -o DIR              (every exercise, each in DIR/SLUG)

One module per platform (:mod:`.gradescope`, :mod:`.prairielearn`, :mod:`.student`,
:mod:`.repository` for both CI platforms), what they
bundle (:mod:`.bundle`: the source, an exercise's files, the scripts in templates/export/),
grading inside their containers (:mod:`.container_grading`, with grader.sandbox.container), and
the command line (:mod:`.command`; ``python -m grader.authoring.export`` is what the exported scripts run).

A name is imported on first use (PEP 562): ``jaxgrade check`` reads an exported pack's record
(:mod:`.pack`) and needs none of the platforms, whose imports (nbformat, jsonschema) would cost
every check ~50 ms of its start.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grader.authoring.export.bundle import copy_exercise
    from grader.authoring.export.command import add_commands
    from grader.authoring.export.gradescope import autograde, export_gradescope
    from grader.authoring.export.prairielearn import export_prairielearn, prairielearn_grade
    from grader.authoring.export.repository import export_github_classroom, export_gitlab_ci
    from grader.authoring.export.student import export_student, visible_checks_source

# Each public name, and the module of this package that defines it.
_HOMES = {"copy_exercise": "bundle", "add_commands": "command", "autograde": "gradescope",
          "export_gradescope": "gradescope", "export_prairielearn": "prairielearn",
          "prairielearn_grade": "prairielearn", "export_student": "student",
          "visible_checks_source": "student", "export_github_classroom": "repository",
          "export_gitlab_ci": "repository"}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'grader.authoring.export' has no attribute {name!r}")
    return getattr(importlib.import_module(f"grader.authoring.export.{_HOMES[name]}"), name)
