"""Package an exercise for where it is used: a Gradescope autograder, or a student's folder.

    jaxgrade export gradescope -e SLUG -o autograder.zip
    jaxgrade export student -e SLUG -o DIR

The Gradescope zip holds ``setup.sh`` (run once on Gradescope's Ubuntu image: installs Python
3.11+ and the bundled jaxgrade source with pip), ``run_autograder`` (run per submission: grades
the ``.py`` file in /autograder/submission and writes /autograder/results/results.json) and the
source under ``jaxgrade/``. ``JAXGRADE_AUTOGRADER_ROOT`` moves /autograder (the tests point it at
a temporary tree) and ``JAXGRADE_PYTHON`` picks the interpreter.

The student folder holds the statement, the starter and a ``check`` script that runs the
visible checks only: the exercise copy inside it has no reference solution, no known-wrong or
right variants, and no check that is not ``visible`` (their code is removed from checks.py).
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import traceback
import zipfile
from pathlib import Path
from typing import Any

from grader.errors import ExerciseError, ExportError
from grader.exercise import Exercise, find_exercise, load_exercise

PACKAGE = Path(__file__).resolve().parent
SOURCE_ROOT = PACKAGE.parent
# What of an exercise folder a grader needs (reference.py warms the compilation cache).
GRADER_PARTS = ("exercise.toml", "statement.md", "starter.py", "checks.py", "reference.py")
STUDENT_PARTS = ("statement.md", "starter.py")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")



# ---------------------------------------------------------------------------------------------
# Gradescope

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (Ubuntu). It installs
# Python 3.11 or newer and the jaxgrade source bundled next to it, with pip, into a virtualenv.
set -euo pipefail
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${JAXGRADE_AUTOGRADER_ROOT:-/autograder}"
VENV="$ROOT/jaxgrade-venv"
export DEBIAN_FRONTEND=noninteractive

pick_python() {
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

PYTHON="$(pick_python || true)"
if [ -z "$PYTHON" ]; then  # Ubuntu 22.04 ships 3.10: take 3.11 from the deadsnakes archive
  apt-get update
  apt-get install -y --no-install-recommends software-properties-common
  add-apt-repository -y ppa:deadsnakes/ppa
  apt-get update
  apt-get install -y --no-install-recommends python3.11 python3.11-venv
  PYTHON=python3.11
fi
if ! "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then
  apt-get update
  apt-get install -y --no-install-recommends "$(basename "$PYTHON")-venv" || apt-get install -y python3-venv
fi

"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --upgrade pip
"$VENV/bin/python" -m pip install "$SOURCE/jaxgrade"
# Grade the reference once now: it fills the compilation cache, so students' grading is faster.
"$VENV/bin/jaxgrade" check "$SOURCE/jaxgrade/exercises/@SLUG@/reference.py" -e @SLUG@ --format json -o /dev/null || true
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission (exercise @SLUG@). It writes results/results.json and
# never prints JSON to stdout. If the grader itself fails, it leaves no results.json on purpose:
# Gradescope then reports "The autograder failed to execute correctly" to the instructor instead
# of recording a score the student did not earn.
set -uo pipefail
ROOT="${JAXGRADE_AUTOGRADER_ROOT:-/autograder}"
PYTHON="${JAXGRADE_PYTHON:-$ROOT/jaxgrade-venv/bin/python}"
export PYTHONPATH="$ROOT/source/jaxgrade${PYTHONPATH:+:$PYTHONPATH}"
rm -f "$ROOT/results/results.json"
"$PYTHON" -m grader.export autograde --root "$ROOT" -e @SLUG@ || {
  echo "jaxgrade: the grader failed (see above); no results.json was written. Regrade after fixing it." >&2
  exit 1
}
"""


def _copy_source(exercise: Exercise, target: Path) -> None:
    """The jaxgrade source pip needs (pyproject, grader/, templates/) with this one exercise."""
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (SOURCE_ROOT / name).is_file():
            shutil.copy2(SOURCE_ROOT / name, target / name)
    if not (target / "README.md").exists():  # pyproject names it as the readme
        (target / "README.md").write_text("jaxgrade, bundled for a Gradescope autograder.\n")
    shutil.copytree(PACKAGE, target / "grader", ignore=SKIP)
    templates = PACKAGE / "templates" if (PACKAGE / "templates").is_dir() else SOURCE_ROOT / "templates"
    shutil.copytree(templates, target / "templates", ignore=SKIP)
    copy_exercise(exercise, target / "exercises" / exercise.slug)


def copy_exercise(exercise: Exercise, destination: Path, parts: tuple[str, ...] = GRADER_PARTS) -> Path:
    """Copy the ``parts`` of an exercise folder that exist (default: what grading needs) to ``destination``."""
    destination.mkdir(parents=True)
    for part in parts:
        if (exercise.directory / part).is_file():
            shutil.copy2(exercise.directory / part, destination / part)
    return destination


def export_gradescope(exercise: Exercise, output: Path) -> Path:
    """Write the autograder zip for ``exercise`` to ``output`` and return its path."""
    output = Path(output)
    if output.suffix != ".zip":
        raise ExportError(f"{output}: Gradescope takes a .zip; name the output e.g. autograder.zip")
    with tempfile.TemporaryDirectory(prefix="jaxgrade-export-") as scratch:
        source = Path(scratch) / "jaxgrade"
        source.mkdir()
        _copy_source(exercise, source)
        output.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
                info = zipfile.ZipInfo(name)
                info.external_attr = (stat.S_IFREG | 0o755) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, text.replace("@SLUG@", exercise.slug))
            for path in sorted(source.rglob("*")):
                if path.is_file():
                    archive.write(path, str(Path("jaxgrade") / path.relative_to(source)))
    return output


def find_submission(folder: Path, exercise: Exercise) -> tuple[Path | None, str]:
    """The submitted file, and if none can be chosen, why (shown to the student)."""
    files = sorted(p for p in folder.rglob("*.py")
                   if p.is_file() and not any(part.startswith((".", "__")) for part in p.relative_to(folder).parts))
    if not files:
        return None, (f"No Python file was submitted. Upload your solution as {exercise.slug}.py "
                      f"(it defines {exercise.function}).")
    named = [p for p in files if p.name == f"{exercise.slug}.py"]
    if len(named) == 1:
        return named[0], ""
    if len(files) == 1:
        return files[0], ""
    defining = [p for p in files
                if re.search(rf"^\s*def\s+{exercise.function}\s*\(", p.read_text(errors="replace"), re.MULTILINE)]
    if len(defining) == 1:
        return defining[0], ""
    listed = ", ".join(str(p.relative_to(folder)) for p in files)
    return None, (f"Several Python files were submitted ({listed}) and jaxgrade cannot tell which is your "
                  f"solution. Submit one file, named {exercise.slug}.py.")


def autograde(root: Path, slug: str) -> int:
    """Grade ``root``/submission and write ``root``/results/results.json (what run_autograder runs)."""
    from grader.engine import grade
    from grader.report.render import gradescope

    results = Path(root) / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    exercise = find_exercise(slug)
    submission, problem = find_submission(Path(root) / "submission", exercise)
    if submission is None:
        data: dict[str, Any] = {"score": 0, "output": problem, "output_format": "text", "visibility": "visible",
                                "tests": []}
    else:
        report = grade(exercise, submission, display_path=submission.name)
        data = gradescope(report)
    temporary = results.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n")
    temporary.replace(results)  # a reader never sees half a file
    print(f"jaxgrade: wrote {results}" + (f" for {submission.name}" if submission else f": {problem}"))
    return 0


# ---------------------------------------------------------------------------------------------
# Student folder

CHECK_SCRIPT = '''#!/usr/bin/env python3
"""Run the visible checks of @SLUG@ on your solution:

    python check            (checks @SLUG@.py)
    python check FILE.py [--format html -o report.html]

Needs jaxgrade installed (pip install jaxgrade, or the package your instructor gave you)."""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ["JAXGRADE_EXERCISES"] = str(HERE / ".jaxgrade" / "exercises")
os.environ.setdefault("JAXGRADE_CACHE", "off")  # no reference solution here to fill it from
try:
    from grader.cli import main
except ImportError:
    sys.exit("check needs jaxgrade: install it with  pip install jaxgrade  (Python 3.11 or newer)")
arguments = sys.argv[1:]
if not arguments or arguments[0].startswith("-"):
    arguments = [str(HERE / "@SLUG@.py"), *arguments]
sys.exit(main(["check", *arguments, "-e", "@SLUG@"]))
'''

README = """# {title}

The task is in `statement.md`; write your solution in `{slug}.py`.

Check your work (needs jaxgrade: `pip install jaxgrade`, Python 3.11 or newer):

    python check

This runs the checks you can see ({visible} of them). {withheld}
"""


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # JSON string escapes are valid TOML basic strings
    raise ExportError(f"cannot write {value!r} to exercise.toml")


def _student_toml(exercise: Exercise, meta: dict[str, Any], visible: list[str]) -> str:
    lines = [f"{key} = {_toml_value(meta[key])}" for key in ("slug", "title", "version", "function", "signature")
             if key in meta]
    if "devices" in meta:
        lines.append(f"devices = {_toml_value(meta['devices'])}")
    if meta.get("limits"):
        lines += ["", "[limits]", *(f"{k} = {_toml_value(v)}" for k, v in meta["limits"].items())]
    lines += ["", "[points]", *(f"{json.dumps(k)} = {_toml_value(exercise.points[k])}" for k in visible)]
    return "\n".join(lines) + "\n"


def _check_id(element: ast.expr) -> str | None:
    if isinstance(element, ast.Call):
        for keyword in element.keywords:
            if keyword.arg == "id" and isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, str):
                return keyword.value.value
    return None


def visible_checks_source(source: str, keep: set[str], where: str) -> str:
    """checks.py with only the checks in ``keep``: the other entries of the ``CHECKS = [...]`` list
    are removed, then every top-level definition nothing refers to any more (their inputs,
    helpers, constants), repeatedly. Comments go too (the code is regenerated from its syntax tree)."""
    tree = ast.parse(source)
    lists = [node for node in tree.body if isinstance(node, ast.Assign) and len(node.targets) == 1
             and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "CHECKS"]
    if len(lists) != 1 or not isinstance(lists[0].value, ast.List):
        raise ExportError(f"{where}: to export without its non-visible checks, checks.py must assign CHECKS "
                          f"once, as a list literal: CHECKS = [Check(id=...), ...]")
    elements = lists[0].value.elts
    ids = [_check_id(e) for e in elements]
    if None in ids:
        raise ExportError(f"{where}: every entry of CHECKS must be a call with a literal id=\"...\" keyword, "
                          f"so the export can tell which checks are visible")
    lists[0].value.elts = [e for e, i in zip(elements, ids) if i in keep]
    while True:
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        used |= {"CHECKS", "PROBE", "SIGNATURE"}
        unused = [node for node in tree.body if _defines(node) and not (_defines(node) & used)]
        for node in tree.body:  # imported names only the removed checks used
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                kept = [a for a in node.names if a.name == "*" or (a.asname or a.name).split(".")[0] in used]
                if not kept:
                    unused.append(node)
                elif len(kept) < len(node.names):
                    node.names = kept
        if not unused:
            break
        tree.body = [node for node in tree.body if node not in unused]
    parts = [f"# Generated by jaxgrade export student from {Path(where).name}: the visible checks only."]
    for node in tree.body:
        if node is lists[0]:
            parts.append("CHECKS = [\n" + "".join(f"    {ast.unparse(e)},\n" for e in lists[0].value.elts) + "]")
        else:
            parts.append(ast.unparse(node))
    return "\n".join(parts) + "\n"


def _defines(node: ast.stmt) -> set[str]:
    """Names a top-level statement binds (imports excluded: they stay)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def export_student(exercise: Exercise, output: Path) -> Path:
    """Write the student's folder for ``exercise`` to ``output`` (which must not exist or be empty)."""
    import tomllib

    output = Path(output)
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise ExportError(f"{output} already exists and is not an empty folder; choose a new folder with -o")
    checks_py = exercise.directory / "checks.py"
    visible = [c.id for c in exercise.checks if exercise.visibility_of(c.id) == "visible"]
    meta = tomllib.loads((exercise.directory / "exercise.toml").read_text())
    if len(visible) == len(exercise.points):
        checks_source = checks_py.read_text()
    else:
        checks_source = visible_checks_source(checks_py.read_text(), set(visible), str(checks_py))
    inner = output / ".jaxgrade" / "exercises" / exercise.slug
    inner.mkdir(parents=True)
    for part in STUDENT_PARTS:
        shutil.copy2(exercise.directory / part, inner / part)
    (inner / "checks.py").write_text(checks_source)
    (inner / "exercise.toml").write_text(_student_toml(exercise, meta, visible))
    shutil.copy2(exercise.directory / "statement.md", output / "statement.md")
    solution = output / f"{exercise.slug}.py"
    solution.write_text(exercise.starter.read_text().replace("THIS_FILE.py", solution.name))
    script = output / "check"
    script.write_text(CHECK_SCRIPT.replace("@SLUG@", exercise.slug))
    script.chmod(0o755)
    withheld = len(exercise.points) - len(visible)
    note = (f"Your instructor grades {withheld} more check{'s' if withheld != 1 else ''} that are not "
            f"included here." if withheld else "")
    (output / "README.md").write_text(README.format(title=exercise.title, slug=exercise.slug,
                                                     visible=len(visible), withheld=note).rstrip() + "\n")
    exported = load_exercise(inner)  # the copy must load and hold exactly the visible checks
    if [c.id for c in exported.checks] != visible:
        raise ExportError(f"the exported checks are {[c.id for c in exported.checks]}, expected {visible}")
    return output


# ---------------------------------------------------------------------------------------------
# Command line

def _export(args: argparse.Namespace) -> int:
    exercise = find_exercise(args.exercise)
    try:
        if args.target == "gradescope":
            path = export_gradescope(exercise, Path(args.output))
            print(f"Wrote {path}: upload it as the autograder of a Gradescope programming assignment; "
                  f"students submit {exercise.slug}.py.")
        else:
            path = export_student(exercise, Path(args.output))
            print(f"Wrote {path}/: give students this folder; they run  python check  inside it.")
    except ExportError as error:
        raise ExerciseError(str(error)) from None
    return 0


def add_commands(commands: Any) -> None:
    """Register ``jaxgrade export`` on the CLI's subcommand parsers."""
    export = commands.add_parser("export", help="package an exercise for Gradescope or for students")
    export.add_argument("target", choices=["gradescope", "student"],
                        help="gradescope: an autograder .zip; student: a folder without solutions or hidden checks")
    export.add_argument("-e", "--exercise", required=True, help="exercise slug")
    export.add_argument("-o", "--output", required=True, help="the .zip (gradescope) or a new folder (student)")
    export.set_defaults(run=_export)


def _main(argv: list[str]) -> int:
    """``python -m grader.export autograde --root ROOT -e SLUG``: what run_autograder calls."""
    parser = argparse.ArgumentParser(prog="python -m grader.export")
    parser.add_argument("action", choices=["autograde"])
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("JAXGRADE_AUTOGRADER_ROOT", "/autograder")))
    parser.add_argument("-e", "--exercise", required=True)
    args = parser.parse_args(argv)
    try:
        return autograde(args.root, args.exercise)
    except Exception:  # a grader failure: no results.json, so Gradescope flags it for the instructor
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
