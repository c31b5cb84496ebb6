"""Where jaxgrade's data folders are: ``exercises/`` and ``templates/``.

A checkout keeps them at the top of the repository, beside ``grader/`` (the layout exercise
authors see); a built wheel carries them inside the package (pyproject.toml maps them to
``grader/exercises`` and ``grader/templates``), since an installed package has no top level.
An editable install runs the checkout itself. This is the one place that tells the cases apart.
"""
from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent  # grader/


def data_folder(name: str) -> Path:
    """The folder ``name`` (``exercises`` or ``templates``): the installed package's copy when
    there is one, else the checkout's top-level folder."""
    installed = PACKAGE / name
    return installed if installed.is_dir() else PACKAGE.parent / name
