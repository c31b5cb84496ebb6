"""What every export carries: the jaxgrade source pip installs, an exercise's files, and the
export's own scripts and pages (``templates/export/``, found as the report templates are)."""
from __future__ import annotations

import shutil
from pathlib import Path

from grader.errors import ExportError
from grader.exercise import Exercise
from grader.export.pack import pinned_constraints, write_pack_record
from grader.paths import PACKAGE, data_folder

SOURCE_ROOT = PACKAGE.parent
# What of an exercise folder a grader needs (reference.py warms the compilation cache).
GRADER_PARTS = ("exercise.toml", "statement.md", "starter.py", "checks.py", "reference.py")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")


def template(name: str) -> str:
    """The text of ``templates/export/NAME`` (a script, the Dockerfile, a page), placeholders unfilled."""
    return (data_folder("templates") / "export" / name).read_text(encoding="utf-8")


def require_source() -> None:
    """Raise an ExportError unless jaxgrade runs from its source (a checkout, or an editable
    install of one): an autograder bundles that source for its image's pip to build, and an
    installed wheel holds no pyproject.toml to build from."""
    if not (SOURCE_ROOT / "pyproject.toml").is_file():
        raise ExportError(f"this jaxgrade is installed ({PACKAGE}), not run from its source, which an autograder "
                          "bundles for its image to install: export from a checkout of jaxgrade's repository "
                          "(pip install -e CHECKOUT; docs/keys.md)")


def copy_grader(target: Path) -> None:
    """The jaxgrade source pip needs (pyproject, its build backend, grader/, templates/), without
    any exercise (its exercises/ holds a note: the graded exercise's key is kept outside the
    package pip installs, where the grading process alone reads it), and constraints.txt: the
    versions installed here, to install it with."""
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (SOURCE_ROOT / name).is_file():
            shutil.copy2(SOURCE_ROOT / name, target / name)
    if (SOURCE_ROOT / "build_backend").is_dir():  # pyproject.toml's backend-path
        shutil.copytree(SOURCE_ROOT / "build_backend", target / "build_backend", ignore=SKIP)
    if not (target / "README.md").exists():  # pyproject names it as the readme
        (target / "README.md").write_text("jaxgrade, bundled for an autograder.\n")
    shutil.copytree(PACKAGE, target / "grader", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*",
                                                                            "exercises", "templates"))
    shutil.copytree(data_folder("templates"), target / "templates", ignore=SKIP)
    (target / "exercises").mkdir()  # pyproject.toml's package-dir names it
    (target / "exercises" / "README.txt").write_text(
        "No exercise is built into this copy of jaxgrade: the graded exercise reaches the grader apart from it "
        "(Gradescope: source/exercises; PrairieLearn: /grade/tests/exercises), closed to the submission.\n")
    (target / "constraints.txt").write_text(pinned_constraints())


def copy_exercise(exercise: Exercise, destination: Path, parts: tuple[str, ...] = GRADER_PARTS) -> Path:
    """Copy the ``parts`` of an exercise folder that exist (default: what grading needs) to
    ``destination``, with the pack's record of this machine's JAX (``grader.export.pack``)."""
    destination.mkdir(parents=True)
    for part in parts:
        if (exercise.directory / part).is_file():
            shutil.copy2(exercise.directory / part, destination / part)
    write_pack_record(exercise, destination)
    return destination
