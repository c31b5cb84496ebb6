"""What a child is kept from seeing: the exercises with their references and checks, other
students' folders, a class run's output, and the grader's own checkout (its tests, its
``.git`` with every version of every reference), but never what the child needs to run (the
grader package, Python, the temporary directory, the compilation cache). The child hides
them itself (grader.child.confine) where it can make a mount namespace.
"""
from __future__ import annotations

import functools
import os
import sys
import tempfile
from pathlib import Path

from grader import runner_files

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # the folder holding grader/
GRADER_PACKAGE = str(Path(__file__).resolve().parents[1])  # grader/ itself: the child imports it


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _git_directories(dot_git: str) -> list[str]:
    """For a ``.git`` file (a worktree or submodule checkout), the git directory it names and
    that directory's common one (which holds every object and branch of the repository)."""
    try:
        with open(dot_git) as handle:
            line = handle.read(4096).strip()
    except (OSError, UnicodeDecodeError):
        return []
    if not line.startswith("gitdir:"):
        return []
    gitdir = os.path.realpath(os.path.join(os.path.dirname(dot_git), line[len("gitdir:"):].strip()))
    found = [gitdir]
    try:
        with open(os.path.join(gitdir, "commondir")) as handle:
            found.append(os.path.realpath(os.path.join(gitdir, handle.read(4096).strip())))
    except (OSError, UnicodeDecodeError):
        pass
    return found


@functools.lru_cache(maxsize=1)
def _checkout() -> tuple[str, tuple[str, ...]] | None:
    """The grader's own source checkout (the real folder holding grader/) and the git
    directories its ``.git`` file names, if any; None when the grader is installed (the folder
    holding grader/ is then site-packages, which the child needs) or is not a checkout (no
    ``.git`` or pyproject.toml there)."""
    parent = os.path.realpath(PACKAGE_PARENT)
    if any(_inside(parent, prefix) for prefix in _python_installation()):
        return None
    dot_git = os.path.join(parent, ".git")
    if not os.path.lexists(dot_git) and not os.path.exists(os.path.join(parent, "pyproject.toml")):
        return None
    named = _git_directories(dot_git) if os.path.isfile(dot_git) and not os.path.islink(dot_git) else []
    return parent, tuple(named)


@functools.lru_cache(maxsize=1)
def _python_installation() -> tuple[str, ...]:
    return tuple(dict.fromkeys(os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                             sys.base_exec_prefix)))


def checkout_entries() -> tuple[str, ...]:
    """Every folder and file of the grader's own checkout but ``grader/`` (its exercises, tests,
    ``.git`` with every version of every reference), and the git directories a ``.git`` file
    points to; empty when the grader is not run from a checkout. Links are left out: covering
    one would cover what it points to. Listed anew for each child (a few µs), so what appears
    later (a class run's out/) is hidden too."""
    found = _checkout()
    if found is None:
        return ()
    parent, git_directories = found
    try:
        with os.scandir(parent) as listing:  # the entry types come with the listing: no stat
            entries = [e.path for e in listing
                       if e.name != "grader" and not e.is_symlink() and (e.is_dir() or e.is_file())]
    except OSError:  # unreadable to the grader itself: then to the child too
        entries = []
    return (*sorted(entries), *git_directories)


def hidden_paths(paths: tuple[str, ...] = (), checkout: bool = True, keep: tuple[str, ...] = ()) -> tuple[str, ...]:
    """What a child can be kept from seeing: of ``paths`` (the exercises with their references
    and checks, the folders submissions came from, a class run's output folder) every existing
    folder, the CI runner's file commands and their folder (grader.runner_files), and with
    ``checkout`` every entry of the grader's own checkout but grader/ (plain files included),
    except what holds the grader, Python, the temporary directory itself or
    a path of ``keep`` (the compilation cache)."""
    needed = [*_python_installation(), *(os.path.realpath(n) for n in (tempfile.gettempdir(), *keep))]
    candidates = [os.path.realpath(p) for p in paths if os.path.isdir(p)]
    candidates += [p for p in runner_files.hidden(os.environ) if os.path.exists(p)]  # $GITHUB_OUTPUT...
    if checkout:
        candidates += checkout_entries()
    hidden = [c for c in candidates if not any(_inside(n, c) for n in needed) and not _inside(GRADER_PACKAGE, c)]
    return tuple(dict.fromkeys(hidden))

