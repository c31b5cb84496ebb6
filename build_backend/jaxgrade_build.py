"""jaxgrade's build backend: setuptools' own, less its note on every editable install.

An editable install of this layout (``grader/`` at the top of the checkout, ``exercises/`` and
``templates/`` beside it, carried inside the package by pyproject.toml's package-dir) gets
setuptools' import hook, whose install always ends with an information-only note, "Editable
installation. Please be careful with folders in your working directory with the same name as
your package", which pip prints as a BuildBackendWarning. Setuptools has no editable mode
without one for a layout whose packages are not all in one source folder of their own: the
strict mode's link tree ends with a note too, the compat mode is deprecated with a warning, and
moving grader/ into a src/ folder would move every path authors and exports know. So that note
alone is not shown; every other warning of a build (a real one) still is.
"""
from __future__ import annotations

import warnings

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403 -- every hook of setuptools' backend
from setuptools.warnings import InformationOnly


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Editable installation", category=InformationOnly)
        return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
