"""``jaxgrade new SLUG``: start a new exercise folder with every part the format needs, in the
course's exercises folder (docs/course.md); ``jaxgrade init DIR``: start a course.

The folder grades once the two things only the author knows are written: the reference
solution and the expected answer in checks.py. ``jaxgrade validate SLUG`` then grades the
reference and the one known-wrong variant it starts with (it defines the wrong function name,
so it fails the load check whatever the exercise is about), and lists what the catalogue
still requires: structure checks, the mistakes students make, other correct solutions
(docs/authoring.md, "What an exercise must have").
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
from pathlib import Path

from grader.errors import UsageError
from grader.authoring.course import COURSE_FILE, exercise_roots, find_course
from grader.authoring.exercise import find_exercise
from grader.paths import PACKAGE, data_folder

SLUG = re.compile(r"^[a-z][a-z0-9_]*$")

EXERCISE_TOML = '''slug = "{slug}"
title = "{title}"
# Bump when a change to the checks should regrade earlier results.
version = "1"
function = "{function}"
# Simulated CPU devices the submission sees (several make a wrong mesh visible).
devices = {devices}

[limits]
call_s = 5          # each import, call or trace
check_s = 30        # the calls of one check together (raised for checks the reference itself needs long for)
total_s = 60        # the whole grading of one submission
memory_mib = 4096

# One entry per check id in checks.py; the values are the points.
[points]
"load.function" = 1
"type.array" = 1
"value.random_inputs" = 2
"limits.resources" = 1
'''

STATEMENT = '''# {title}

## Why it matters
Say what the concept is for, in a paragraph.

## Worked example
```python
# a short example that runs, different from the task itself
```

## Your task
Write `{function}(x)`, where `x` is a one-dimensional float32 JAX array, that ...

The grader runs your function with {devices} simulated CPU devices and checks both the values
it returns and how it computes them.

## Pitfalls
- The mistakes the known-wrong variants in wrong/ make, said as advice.
'''

STARTER = '''"""{title}.

Write {function}(x), where x is a one-dimensional float32 JAX array, that ...

Check your work with:  jaxgrade check THIS_FILE.py
"""
import jax
import jax.numpy as jnp


def {function}(x: jax.Array) -> jax.Array:
    # Your code here.
    raise NotImplementedError("{function} is not written yet")
'''

REFERENCE = '''"""Reference solution for {slug}: must get full marks under every seed."""
import jax
import jax.numpy as jnp


def {function}(x: jax.Array) -> jax.Array:
    raise NotImplementedError("write the reference solution of {slug}")
'''

CHECKS = '''"""Checks for {slug}, built from the grader's check library (see docs/authoring.md)."""
import numpy as np

from grader.authoring import (LENGTHS, Array, LoadsFunction, Returns, Signature, ValueProperty, WithinLimits,
                              arguments, dims, elementwise_tolerance, float32_array)

# The parameters (names, dtypes, shapes by dimension name) and what the function returns.
SIGNATURE = Signature({{"x": Array("float32", "n")}}, returns=Array("float32", "n"))

# Structure checks observe the function on these arguments: distinct values, a shape no value test uses.
PROBE = {{"x": np.array([2.0, -1.0, 4.0, 0.5, -3.25, 7.0, 1.5, 3.0], dtype=np.float32)}}


def expected(x: np.ndarray) -> np.ndarray:
    """The exact answer for x, computed with NumPy (float64 where rounding matters)."""
    raise NotImplementedError("write the expected answer of {slug} in checks.py")


CHECKS = [
    LoadsFunction(),  # id load.function, titled "The file loads and defines {function}(x)"
    Returns(id="type.array", title="Returns a float32 JAX array shaped like x"),
    ValueProperty(id="value.random_inputs", title="Correct on random inputs (Hypothesis)",
                  inputs=arguments(dims(n=LENGTHS), x=float32_array("n", bound=1e3)), expected=expected,
                  # one float32 rounding per element (and flushed subnormals); derive your own from the
                  # computation (docs/authoring.md, "Value properties")
                  tolerance=elementwise_tolerance(expected)),
    # Add structure checks (*placement_checks(TARGET) for a NamedShardingTarget, UsesPrimitive, ...)
    # with their ids in exercise.toml [points].
    WithinLimits(),  # id limits.resources
]
'''

WRONG = '''# expect: load
"""Defines the function under another name: the grader cannot find {function}."""
import jax
import jax.numpy as jnp


def {function}_solution(x: jax.Array) -> jax.Array:
    return x
'''


def _new_folder(root: Path, slug: str) -> Path:
    """``root/slug`` for a new exercise: a ValueError for a bad slug, FileExistsError for a taken one."""
    if not SLUG.match(slug):
        raise ValueError(f"{slug!r} is not a valid slug: use lower-case letters, digits and underscores, "
                         "starting with a letter (e.g. shard_rows)")
    directory = root / slug
    if directory.exists():
        raise FileExistsError(f"{directory} already exists; choose another slug or remove it first")
    return directory


def scaffold(slug: str, root: Path, *, function: str | None = None, title: str | None = None,
             devices: int = 8) -> Path:
    """Write the folder ``root/slug`` and return it; refuses to touch an existing one."""
    directory = _new_folder(root, slug)
    values = {"slug": slug, "function": function or slug, "devices": devices,
              "title": title or slug.replace("_", " ").capitalize()}
    if not values["function"].isidentifier():
        raise ValueError(f"{values['function']!r} is not a Python function name")
    files = {"exercise.toml": EXERCISE_TOML, "statement.md": STATEMENT, "starter.py": STARTER,
             "reference.py": REFERENCE, "checks.py": CHECKS, "wrong/load_wrong_name.py": WRONG}
    for name, template in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(**values))
    (directory / "right").mkdir()
    return directory


def copy_in(source: Path, slug: str, root: Path) -> Path:
    """Copy the exercise folder ``source`` to ``root/slug``, to be changed there (``jaxgrade new
    --from``): under its own slug it takes the place of the track's, under another it is one
    more; exercise.toml's slug is rewritten to match. Refuses to touch an existing folder."""
    directory = _new_folder(root, slug)
    shutil.copytree(source, directory, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "pack.json"))
    toml = directory / "exercise.toml"
    toml.write_text(re.sub(r'(?m)^slug\s*=.*$', f'slug = "{slug}"', toml.read_text(), count=1))
    return directory


def new_exercises_folder() -> Path:
    """Where ``jaxgrade new`` writes without --root: the first folder of JAXGRADE_EXERCISES, else
    the course's exercises folder, else a checkout's exercises/ (the track's authors); never
    the package of an installed jaxgrade."""
    if "JAXGRADE_EXERCISES" in os.environ:
        return exercise_roots()[0]
    course = find_course()
    if course is not None:
        return course.exercises
    track = data_folder("exercises")
    if track.parent == PACKAGE:
        raise UsageError(f"no course here ({COURSE_FILE} in this folder or one above): start one with  jaxgrade init "
                         "DIR  and run jaxgrade new inside it, or give --course DIR or --root FOLDER")
    return track


COURSE_TOML = '''# A jaxgrade course (docs/course.md): jaxgrade run in this folder, or any folder under it, grades
# the course's own exercises (folders under `exercises`) beside the track's that jaxgrade ships.
exercises = "exercises"
# The track's exercises the course uses: "all", "none", a list of slugs, e.g.
# track = ["named_sharding_replicated", "sgd_step"], or the same pinned to their versions (a
# jaxgrade whose track changed one refuses to grade with it, exit 2):
# track = {named_sharding_replicated = "3", sgd_step = "2"}
track = "all"
# A package of check helpers the course's checks.py may import by its folder's name:
# helpers = "course_helpers"
'''
COURSE_README = '''# {name}

A jaxgrade course. `jaxgrade list` shows its exercises (the ones in `exercises/`, then the
track's); `jaxgrade new SLUG` starts one in `exercises/`; `jaxgrade validate` proves this
course's own; `jaxgrade export student --all -o packs/` writes each one's student pack
(jaxgrade's docs/course.md says more).
'''


def init_course(folder: Path) -> Path:
    """Write a course skeleton into ``folder`` (new, or without a course file): jaxgrade.toml, an
    empty exercises/ and a README."""
    folder = Path(folder)
    if (folder / COURSE_FILE).exists():
        raise FileExistsError(f"{folder / COURSE_FILE} exists already: {folder} is a course")
    (folder / "exercises").mkdir(parents=True, exist_ok=True)
    (folder / COURSE_FILE).write_text(COURSE_TOML)
    if not (folder / "README.md").exists():
        (folder / "README.md").write_text(COURSE_README.format(name=folder.resolve().name))
    return folder


def _init_command(args: argparse.Namespace) -> int:
    from grader.errors import ExitCode

    try:
        folder = init_course(Path(args.folder))
    except OSError as error:  # the folder cannot be written, or is a course already
        raise UsageError(str(error)) from None
    print(f"Wrote {folder / COURSE_FILE} and {folder / 'exercises'}/. Next: cd {folder} and  jaxgrade new SLUG")
    return ExitCode.OK


def _new_command(args: argparse.Namespace) -> int:
    from grader.errors import ExitCode

    if args.slug is None and args.source is None:
        raise UsageError("name the new exercise (jaxgrade new SLUG), or the track's exercise to copy in "
                         "(jaxgrade new --from SLUG)")
    source = find_exercise(args.source) if args.source else None
    slug = args.slug or args.source
    root = Path(args.root) if args.root else new_exercises_folder()
    try:
        if source is None:
            directory = scaffold(slug, root, function=args.function, title=args.title, devices=args.devices)
        else:
            directory = copy_in(source.directory, slug, root)
    except (ValueError, FileExistsError) as error:
        raise UsageError(str(error)) from None
    if source is None:
        print(f"Wrote {directory}. Next: write reference.py and expected() in checks.py, then run "
              f"jaxgrade validate {slug}")
    else:
        keyless = "" if source.has_key else (" It has no answer key (reference.py, right/, wrong/): this jaxgrade "
                                              "was installed without the track's keys (docs/keys.md).")
        print(f"Copied {source.directory} to {directory}: change it there, then run jaxgrade validate {slug}."
              + keyless)
    return ExitCode.OK


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Register ``new`` and ``init`` with the jaxgrade parser (called by grader.cli)."""
    new = commands.add_parser("new", help="scaffold a new exercise folder")
    new.add_argument("slug", nargs="?", help="the exercise's folder name, e.g. shard_rows")
    new.add_argument("--from", dest="source", metavar="SLUG",
                     help="copy this exercise (the track's) into the course to change it, under its own slug "
                          "(it replaces the track's) or the one given")
    new.add_argument("--function", help="the function students write (default: the slug)")
    new.add_argument("--title", help="the exercise's title (default: from the slug)")
    new.add_argument("--devices", type=int, default=8, help="simulated CPU devices (default 8)")
    new.add_argument("--root", help="the exercises folder (default: the course's, docs/course.md)")
    new.set_defaults(run=_new_command)
    init = commands.add_parser("init", help="start a course folder: jaxgrade.toml and exercises/")
    init.add_argument("folder", nargs="?", default=".", help="the course's folder (default: this one)")
    init.set_defaults(run=_init_command)
