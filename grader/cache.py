"""The persistent XLA compilation cache children share.

Every array length a submission sees costs a JAX compilation (~30 ms each). The cache is
filled by grading the exercise's reference solution once (trusted code), so a submission
that computes the same programs as the reference finds them compiled; a class run big enough
to repay it (grader.engine.variants_repay) also fills it from the exercise's own right/ and
wrong/ variants (the instructor's code too), so the programs typical mistakes run (another
mesh, a mean, a slice) are found compiled as well.
Keys depend on the program, the JAX version and the device count, not on the directory, so
the cache can move.
"""
from __future__ import annotations

import os
from pathlib import Path

from grader import __version__

# Entries are made with source file names stripped from their programs (grader.sandbox sets
# JAX_HLO_SOURCE_FILE_CANONICALIZATION_REGEX): a cache of the older kind, which names
# reference.py and the variants, is never read again, nor its markers trusted.
LAYOUT = "anon"


def cache_root() -> Path | None:
    """``$JAXGRADE_CACHE`` (``off`` disables it), else ``~/.cache/jaxgrade``."""
    configured = os.environ.get("JAXGRADE_CACHE")
    if configured == "off":
        return None
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "jaxgrade"


def _cache_folder(name: str, private: bool = False, group: int | None = None) -> Path | None:
    """The folder ``name`` of the cache root, made if missing (``private``: 0700, or 0750 to
    ``group`` alone); None when the cache is off or the folder cannot be made (an unwritable
    home only costs speed)."""
    root = cache_root()
    if root is None:
        return None
    directory = root / name
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if group is not None:
            os.chown(directory, -1, group)
        if private:
            directory.chmod(0o700 if group is None else 0o750)
    except OSError:
        return None
    return directory


def xla_cache_folder(jax_version: str) -> Path | None:
    """The folder (made if missing) holding the XLA programs ``jax_version`` compiled; None when
    the cache is off or cannot be made. ``compile_cache_directory`` is this for the JAX
    installed here."""
    return _cache_folder(f"xla-jax{jax_version}-{LAYOUT}")


def witness_cache_folder(group: int | None = None) -> str | None:
    """The compilation cache of the witness (``grader.witness``), made if missing: the programs
    it compiles are submissions' own, so it is the grader's alone (0700; 0750 to the witnesses'
    ``group``, which no child has), never the folder a child reads, where one student could read
    another's compiled programs. None when the cache is off or cannot be made."""
    from importlib.metadata import version
    directory = _cache_folder(f"witness-jax{version('jax')}", private=True, group=group)
    return None if directory is None else str(directory)


def drawn_folder() -> Path | None:
    """Where value checks keep the inputs they drew (``grader.checks.drawn_inputs``), made if
    missing: the grader's alone (0700), since whoever writes it chooses the inputs later checks
    run. None when the cache is off or cannot be made."""
    return _cache_folder("drawn", private=True)


def warmed_marker(slug: str, fingerprint: str, source: str = "reference") -> Path | None:
    """The file saying the cache was filled from ``source`` (the reference, or the variants)
    for this version of the exercise and of jaxgrade."""
    root = cache_root()
    if root is None:
        return None
    suffix = "" if source == "reference" else f"-{source}"
    return root / f"warmed-{LAYOUT}" / f"{slug}-{fingerprint}-{__version__}{suffix}"


def compile_cache_directory() -> str | None:
    """The compilation cache children read (None: none can be used here), not filled yet."""
    from importlib.metadata import version
    directory = xla_cache_folder(version("jax"))
    return None if directory is None else str(directory)


def compile_cache_of(slug: str, fingerprint: str) -> tuple[str | None, Path | None]:
    """The compilation cache a grading of this version of an exercise reads
    (grader.engine.warm_compile_cache), and the marker still to write once the exercise's
    reference has filled it: (None, None) where no cache can be used here, (folder, None) once it
    is filled, (folder, marker) before. ``jaxgrade check`` spawns its child before anything else
    only in the second case: the child's environment names the cache."""
    directory, marker = compile_cache_directory(), warmed_marker(slug, fingerprint)
    if directory is None or marker is None:
        return None, None
    return directory, None if marker.exists() else marker
