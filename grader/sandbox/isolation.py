"""One line for a run that says which of the sandbox's isolation layers are in force and which
are missing, from a report's ``environment.protections`` (what the parent enforces and what the
child reported after confining itself, ``grader.child.confine``).

Where the kernel lacks a feature (gVisor, a rootless container, Docker without CAP_SYS_ADMIN),
every child lacks it alike: a class run, or a check, says so once, on stderr, instead of once per
child or not at all; each report keeps the full details. Where every layer is in force there is
nothing to say, and nothing is printed.
"""
from __future__ import annotations

import sys
import threading
from typing import Any, TextIO


def isolation_line(protections: dict[str, Any] | None) -> str | None:
    """``jaxgrade: isolation: N of M layers; missing: a, b; active: c, d, ...``, or None when
    none is missing (or nothing was reported: the child never started)."""
    if not isinstance(protections, dict) or not protections:
        return None
    layers = {str(name): isinstance(value, dict) and value.get("active") is True for name, value in protections.items()}
    missing = [name for name, active in layers.items() if not active]
    if not missing:
        return None
    active = [name for name, on in layers.items() if on]
    return (f"jaxgrade: isolation: {len(active)} of {len(layers)} layers; missing: {', '.join(missing)}; "
            f"active: {', '.join(active) or 'none'} (each report's environment.protections says why)")


class IsolationNotice:
    """Prints :func:`isolation_line` for the first report that has one, once per run."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self._done = False
        self._lock = threading.Lock()

    def report(self, protections: dict[str, Any] | None) -> None:
        with self._lock:
            if self._done:
                return
            line = isolation_line(protections)
            if line is None:
                return
            self._done = True
        print(line, file=self.stream or sys.stderr, flush=True)
