"""A package jaxgrade needs that is missing or fails to import: an install to fix, named as one
("jaxgrade needs flatbuffers: pip install flatbuffers"), never reported as a bug in jaxgrade.

Such a failure reaches a command two ways. In the grader's own process it is an ImportError
naming the module (a Python whose path was set by hand, without one of the packages). In the
warm process, the child or the witness (JAX imported there, ``jax.export`` needing
flatbuffers) it arrives as that process's words, an ImportError's text inside a grader fault;
the package is then found by importing each of jaxgrade's requirements here, on the same path
the children are given (grader.importpath), and naming the first that fails.
"""
from __future__ import annotations

import importlib
import importlib.metadata as metadata
import re
import sys

from grader import DEPENDENCIES

_IMPORT_FAILED = re.compile(r"\b(?:ImportError|ModuleNotFoundError)\b|No module named")


def _chain(error: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    while error is not None and error not in found:
        found.append(error)
        error = error.__cause__ or error.__context__
    return found


def _distribution(module: str) -> str:
    """The distribution that installs the top-level ``module`` (PyYAML for yaml), else its name."""
    return next(iter(metadata.packages_distributions().get(module, ())), module)


def _first_broken() -> tuple[str, str] | None:
    """(distribution, why) for the first of jaxgrade's requirements that does not import here."""
    for name in DEPENDENCIES:
        try:
            importlib.import_module(name)
        except ImportError as error:
            missing = (error.name or "").partition(".")[0]
            return (_distribution(missing) if missing and missing != name else name,
                    f"{type(error).__name__}: {error}")
    return None


def _line(found: tuple[str, str] | None) -> str | None:
    if found is None:
        return None
    package, why = found
    return (f"jaxgrade needs {package}: pip install {package} (in the Python that runs jaxgrade, {sys.executable}; "
            f"importing it failed: {' '.join(why.split())[:300]})")


def needed_package(error: BaseException) -> str | None:
    """The line that names the package ``error`` shows missing or broken, with how to install
    it; None when ``error`` is no failed import of a package jaxgrade needs."""
    chain = _chain(error)
    named = next((e for e in chain if isinstance(e, ImportError) and e.name), None)
    top = named.name.partition(".")[0] if named is not None and named.name else ""
    if top and top != "grader":
        return _line((_distribution(top), f"{type(named).__name__}: {named}"))
    if any(isinstance(e, ImportError) or _IMPORT_FAILED.search(str(e)) for e in chain):
        return _line(_first_broken())
    return None


def needed_package_in(reason: str) -> str | None:
    """The same for a failure another process reported in words (a class run's "the grader
    failed (PoolError: ... ImportError: ...)")."""
    return _line(_first_broken()) if _IMPORT_FAILED.search(reason) else None
