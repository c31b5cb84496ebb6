"""Where this process found the grader, JAX and their dependencies: the folders a child must
import from (``grader.child.search_path`` makes them the child's path).

The grader's requirements are read from the checkout's ``pyproject.toml`` when the grader runs
from a checkout, else from its installed metadata, and followed through each installed
distribution's own requirements (jax: jaxlib, numpy, ml_dtypes, scipy...; rich: pygments,
markdown-it-py...; extras left out); each one's folder is where its metadata lies, the folder
of ``sys.path`` Python finds it in. The folder holding ``jax`` itself is always one, metadata
or not (a Bazel or pex layout may have none). Folders of ``sys.path`` that hold none of these
(the current folder, a script's) are never a child's.
"""
from __future__ import annotations

import functools
import importlib.metadata as metadata
import importlib.util
import os
import re
import sys
import tomllib
from pathlib import Path

GRADER_FOLDER = str(Path(__file__).resolve().parent.parent)  # the folder holding grader/
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _names(requirements: list[str] | None) -> list[str]:
    """The distributions named by requirement strings, but those only an extra asks for."""
    found = []
    for text in requirements or ():
        if "extra" in text.partition(";")[2]:
            continue
        match = _NAME.match(text)
        if match:
            found.append(_normal(match.group(1)))
    return found


def _grader_requirements() -> list[str]:
    """The grader's own requirements: its checkout's pyproject.toml, else its metadata."""
    project = Path(GRADER_FOLDER) / "pyproject.toml"
    try:
        with open(project, "rb") as handle:
            table = tomllib.load(handle).get("project", {})
        if table.get("name") == "jaxgrade":
            return _names(table.get("dependencies"))
    except (OSError, tomllib.TOMLDecodeError):
        pass
    try:
        return _names(metadata.requires("jaxgrade"))
    except metadata.PackageNotFoundError:
        return ["jax", "jaxlib", "numpy", "rich"]


def _entry_of(path: str, entries: list[str]) -> str | None:
    """``path`` if it is one of ``entries`` (real paths): what a finder outside ``sys.path``
    found (an editable install's) is no folder of it, and none that merely contains it is."""
    real = os.path.realpath(path)
    return real if real in entries else None


@functools.lru_cache(maxsize=1)
def dependency_folders() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(order, needed)``: this process's ``sys.path`` as real paths, and of them (in that
    order) the folders holding a distribution the grader needs, or ``jax``. Not the grader's
    own folder, unless it holds one of those too (site-packages does)."""
    order = list(dict.fromkeys(os.path.realpath(p or ".") for p in sys.path if isinstance(p, str)))
    needed: set[str] = set()
    seen: set[str] = set()
    waiting = _grader_requirements()
    while waiting:
        name = waiting.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        try:
            located = _entry_of(str(dist.locate_file("")), order)
        except (TypeError, ValueError, NotImplementedError):
            located = None
        if located is not None:
            needed.add(located)
        waiting.extend(_names(dist.requires))
    spec = importlib.util.find_spec("jax")
    if spec is not None and spec.origin:
        located = _entry_of(os.path.dirname(os.path.dirname(spec.origin)), order)
        if located is not None:
            needed.add(located)
    return tuple(order), tuple(p for p in order if p in needed)


@functools.lru_cache(maxsize=1)
def real_locations() -> tuple[str, ...]:
    """The needed folders and, where an entry of one is a link (a Spack or Nix view, a folder
    of links into a venv), the real path of what it points to: what a child must still reach
    when paths around it are hidden (grader.sandbox.hiding), or no module there imports."""
    found = list(dependency_folders()[1])
    for folder in dependency_folders()[1]:
        try:
            with os.scandir(folder) as listing:
                found += [os.path.realpath(e.path) for e in listing if e.is_symlink()]
        except OSError:
            continue
    return tuple(dict.fromkeys(found))


def boot(statement: str) -> str:
    """The ``python -I -c`` code of a child (or a zygote, or the witness): its ``sys.path`` made the parent's
    folders of the grader, JAX and their dependencies (grader.child.search_path), then
    ``statement``. ``-I`` alone would keep only the interpreter's own: a PYTHONPATH, ``--user``
    or checkout install's JAX would be missing, or another version found in its place. The first
    statement notes the instant (``first_line``) the child's timings start from (grader.timings)."""
    order, needed = dependency_folders()
    return (f"import sys, time; first_line = time.monotonic(); sys.path.insert(0, {GRADER_FOLDER!r}); "
            "from grader.child.search_path import adopt; "
            f"adopt({list(order)!r}, {list(needed)!r}, {GRADER_FOLDER!r}); {statement}")


# An import statement at the start of a line (indented too): found by a scan of lines, not by
# parsing, which costs ~600 bytes of objects a byte of code (the grader parses no student's
# file). A line inside a string may be taken for one: at worst, a file of the student's that
# exists is copied too.
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+(?P<origin>\.*[\w.]*)[ \t]+import[ \t]+(?P<names>[^#;\n]*)"
                          r"|import[ \t]+(?P<modules>[^#;\n]*))", re.MULTILINE)


def imports_of(text: str) -> list[tuple[int, str | None, tuple[str, ...]]]:
    """(level, module, names imported from it) of each import line of ``text``."""
    found: list[tuple[int, str | None, tuple[str, ...]]] = []
    for line in _IMPORT_LINE.finditer(text):
        if line.group("modules") is not None:
            found += [(0, words[0], ()) for item in line.group("modules").split(",") if (words := item.split())]
            continue
        origin = line.group("origin")
        module = origin.lstrip(".") or None
        names = tuple(words[0] for item in line.group("names").strip(" \t()\\").split(",")
                      if (words := item.strip(" \t()\\").split()))
        found.append((len(origin) - len(origin.lstrip(".")), module, names))
    return found
