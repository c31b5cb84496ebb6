"""The XLA options every process that compiles a submission's programs runs with: each child
and the witness (``grader.witness``), so that the two compile alike and a class of processes
on a many-core machine do not each spin a pool of threads as wide as the machine."""
from __future__ import annotations

import itertools

# XLA options for every child and the witness. Graded programs are tiny and run a handful of times, so
# compiling is most of their cost: without LLVM's optimisations and with XLA's older CPU
# emitters an operation compiles 2-3x faster (about 36 -> 16 ms each here), and a mistake
# compiles its operations once per input shape. Every child (the reference filling the
# cache included) gets the same options, which are part of the compilation cache's key.
# The older emitters' switch is gone from jaxlib 0.11 on, whose XLA refuses to start with a flag
# it does not know: there (or where jaxlib's version cannot be read) only the first option is set.
def xla_flags(jaxlib_version: str | None) -> str:
    """The children's XLA_FLAGS for a jaxlib of ``jaxlib_version`` (None: unknown)."""
    flags = ["--xla_backend_optimization_level=0"]
    if jaxlib_version is not None and release_of(jaxlib_version) < (0, 11):
        flags.append("--xla_cpu_use_fusion_emitters=false")
    return " ".join(flags)


def release_of(version: str) -> tuple[int, ...]:
    """A version's leading numbers: "0.12.0.1" -> (0, 12, 0, 1), "0.9.0rc1" -> (0, 9, 0)."""
    numbers = []
    for part in version.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
        if digits != part:
            break
    return tuple(numbers)


def _installed(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(package)
    except PackageNotFoundError:
        return None


XLA_FLAGS = xla_flags(_installed("jaxlib"))
