"""What every export carries: the jaxgrade source pip installs, an exercise's files, and the
export's own scripts and pages (``templates/export/``, found as the report templates are)."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from grader.errors import ExportError
from grader.authoring.course import CARRIED_HELPERS
from grader.authoring.exercise import Exercise
from grader.authoring.export.pack import pinned_constraints, write_pack_record
from grader.paths import PACKAGE, data_folder

SOURCE_ROOT = PACKAGE.parent
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")
# What of an exercise folder a grader leaves out: the variants, which only validate grades, and
# the helpers an earlier export carried (copied again from where the exercise finds them).
NOT_GRADED = shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "right", "wrong", CARRIED_HELPERS)


def empty_folder(output: Path) -> Path:
    """``output`` as a folder an export may fill: new (made here) or empty, else ExportError."""
    output = Path(output)
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise ExportError(f"{output} already exists and is not an empty folder; choose a new folder with -o")
    output.mkdir(parents=True, exist_ok=True)
    return output


def template(name: str) -> str:
    """The text of ``templates/export/NAME`` (a script, the Dockerfile, a page), placeholders unfilled."""
    return (data_folder("templates") / "export" / name).read_text(encoding="utf-8")


def installed_pyproject() -> str:
    """pyproject.toml for the source an installed jaxgrade bundles (a wheel holds none): the name,
    version, Python and requirements its metadata states, the packages as they lie installed, and
    exercises/ and templates/ carried inside the package as data, as the repository's own
    pyproject.toml carries them."""
    from importlib.metadata import distribution

    installed = distribution("jaxgrade")
    needs = [r for r in installed.requires or [] if not re.search(r"extra\s*==", r)]
    scripts = {e.name: e.value for e in installed.entry_points if e.group == "console_scripts"}
    packages = sorted({".".join(p.parent.relative_to(SOURCE_ROOT).parts) for p in PACKAGE.rglob("__init__.py")
                       if not {"exercises", "templates", "__pycache__"} & set(p.relative_to(PACKAGE).parts)})
    data = ("grader.exercises", "grader.templates")
    return "\n".join([
        "# Written by jaxgrade export from the installed jaxgrade's metadata (it holds no pyproject.toml).",
        "[build-system]", 'requires = ["setuptools>=68"]', 'build-backend = "setuptools.build_meta"', "",
        "[project]", f'name = "{installed.metadata["Name"]}"', f'version = "{installed.version}"',
        f'requires-python = {json.dumps(installed.metadata["Requires-Python"] or ">=3.11")}',
        f"dependencies = {json.dumps(needs)}", "",
        "[project.scripts]", *(f"{name} = {json.dumps(value)}" for name, value in scripts.items()), "",
        "[tool.setuptools]", "include-package-data = false", f"packages = {json.dumps([*packages, *data])}", "",
        "[tool.setuptools.package-dir]", *(f'"{p}" = "{p.split(".")[1]}"' for p in data), "",
        "[tool.setuptools.package-data]", *(f'"{p}" = ["**/*"]' for p in data), ""])


NO_EXERCISE = ("No exercise is built into this copy of jaxgrade: the graded exercise reaches the grader apart "
               "from it (Gradescope: source/exercises; PrairieLearn: /grade/tests/exercises), closed to the "
               "submission.\n")


def copy_grader(target: Path, where: str = NO_EXERCISE) -> None:
    """The jaxgrade source pip needs (pyproject, its build backend, grader/, templates/), without
    any exercise (its exercises/ holds only a README.txt saying ``where`` the exercise is: the
    graded exercise's key is kept outside the package pip installs, where the grading process
    alone reads it), and constraints.txt: the versions installed here, to install it with."""
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (SOURCE_ROOT / name).is_file():
            shutil.copy2(SOURCE_ROOT / name, target / name)
    if not (SOURCE_ROOT / "pyproject.toml").is_file():  # an installed jaxgrade, not a checkout
        (target / "pyproject.toml").write_text(installed_pyproject())
    if (SOURCE_ROOT / "build_backend").is_dir():  # pyproject.toml's backend-path
        shutil.copytree(SOURCE_ROOT / "build_backend", target / "build_backend", ignore=SKIP)
    if not (target / "README.md").exists():  # pyproject names it as the readme
        (target / "README.md").write_text("jaxgrade, bundled for an autograder.\n")
    shutil.copytree(PACKAGE, target / "grader", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*",
                                                                            "exercises", "templates"))
    shutil.copytree(data_folder("templates"), target / "templates", ignore=SKIP)
    (target / "exercises").mkdir()  # pyproject.toml's package-dir names it
    (target / "exercises" / "README.txt").write_text(where)
    (target / "constraints.txt").write_text(pinned_constraints())


def bundle_source(target: Path, where: str) -> Path:
    """The jaxgrade source (:func:`copy_grader`) in the new folder ``target``."""
    target.mkdir(parents=True)
    copy_grader(target, where)
    return target


def copy_exercise(exercise: Exercise, destination: Path) -> Path:
    """Copy what grading ``exercise`` needs to ``destination``: its folder but the variants (the
    files its checks read beside them travel too, not only checks.py) and the helper packages its
    checks import, with the pack's record of this machine's JAX (``grader.authoring.export.pack``)."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(exercise.directory, destination, ignore=NOT_GRADED)
    copy_helpers(exercise, destination)
    write_pack_record(exercise, destination)
    return destination


def copy_helpers(exercise: Exercise, destination: Path) -> None:
    """The helper packages the exercise's checks.py imports (a course's), carried in the copy of
    its folder at ``destination``, where grader.authoring.course finds them again."""
    for package in exercise.helpers:
        shutil.copytree(package, destination / CARRIED_HELPERS / package.name, ignore=SKIP)
