"""A value check's drawn inputs, kept on disk between processes (``grader.cache.drawn_folder``).

Drawing 100 argument dicts with Hypothesis costs a ``jaxgrade check`` about 0.15 s of CPU, the
same inputs every time: the seed fixes them, as do the strategy (its ``repr`` names every part
and domain), Hypothesis's and NumPy's versions and jaxgrade's. So the first check of an
exercise under a seed keeps them, and later checks read them back; a report is the same either
way. What is read back is data only (JSON and the bytes of arrays, never a pickle), and any entry
that does not read back cleanly is drawn again. The folder is the grader's alone (0700): no
child, which could otherwise choose the inputs every later check runs, can write it.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from grader import __version__
from grader.cache import drawn_folder
from grader.wire import decode_array, encode_array

FORMAT = 1  # this file's encoding: an entry of another is never read


def key_of(strategy: str, run_seed: int, examples: int) -> str:
    """The entry's name: everything the draws depend on."""
    versions = []
    for package in ("hypothesis", "numpy"):
        try:
            versions.append(version(package))
        except PackageNotFoundError:
            versions.append("?")
    text = json.dumps([FORMAT, __version__, *versions, strategy, run_seed, examples])
    return hashlib.sha256(text.encode()).hexdigest()


def load(key: str) -> list[dict[str, Any]] | None:
    """The inputs kept under ``key``, or None (none kept, the cache off, or an unreadable entry)."""
    folder = drawn_folder()
    if folder is None:
        return None
    try:
        entry = json.loads((folder / f"{key}.json").read_text())
        drawn = [_decode(arguments) for arguments in entry]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return drawn if all(isinstance(arguments, dict) for arguments in drawn) else None


def store(key: str, drawn: list[dict[str, Any]]) -> None:
    """Keep ``drawn`` under ``key`` where it reads back exactly; best effort (a full disk or an
    unwritable home only costs the next check its drawing)."""
    folder = drawn_folder()
    if folder is None:
        return
    try:
        encoded = [_encode(arguments) for arguments in drawn]
    except ValueError:  # a value this encoding does not keep: drawn every time
        return
    if not all(_same(a, _decode(e)) for a, e in zip(drawn, encoded)):
        return
    try:
        _write_atomically(folder / f"{key}.json", json.dumps(encoded))
    except OSError:
        pass


def _write_atomically(path: Path, text: str) -> None:
    """Readers see the old entry or the whole new one, never part of it (another grading
    process may store the same key at the same moment)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".drawn-")
    try:
        with os.fdopen(handle, "w") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _encode(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return {"array": encode_array(value)}
    if isinstance(value, np.generic):
        return {"scalar": encode_array(np.asarray(value))}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": [[k, _encode(v)] for k, v in value.items()]}
    if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
        return {type(value).__name__: [_encode(v) for v in value]}
    raise ValueError(f"a drawn value of type {type(value).__name__}")


def _decode(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    (kind, content), = value.items()
    if kind == "array":
        return decode_array(content)
    if kind == "scalar":
        return decode_array(content)[()]
    if kind == "dict":
        return {str(k): _decode(v) for k, v in content}
    if kind in ("tuple", "list"):
        items = [_decode(v) for v in content]
        return tuple(items) if kind == "tuple" else items
    raise ValueError(f"an entry of kind {kind!r}")


def _same(a: Any, b: Any) -> bool:
    """Whether ``b`` is ``a`` read back: the same types, dtypes, shapes and bits."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if isinstance(a, np.ndarray):  # read back C-ordered: an array laid out otherwise is drawn every time
        return (a.dtype == b.dtype and a.shape == b.shape and a.flags.c_contiguous
                and a.tobytes() == b.tobytes())
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b or (isinstance(a, float) and a != a and b != b)
