"""How long and how big a submission may run: what the parent enforces (grader.sandbox.process)
and what the child applies to itself (grader.child.confine.Policy holds them)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grader.child.confine import ChildLimits


@dataclass(frozen=True)
class Limits:
    """How long and how big a submission may run. ``call_s`` bounds each request (an
    import, a call, a trace); ``check_s`` the requests of one check together (at least: the
    engine raises it for checks the reference solution itself needs long for); ``total_s``
    the whole grading of one submission."""
    call_s: float = 5.0
    check_s: float = 30.0
    total_s: float = 60.0
    startup_s: float = 60.0
    memory_mib: int = 4096
    output_kib: int = 64
    file_mib: int = 64
    # Everything the child may write, all places together (its working folder, /tmp, /var/tmp,
    # /dev/shm): a tmpfs of this size where it has a mount namespace, else a watched folder.
    scratch_mib: int = 256
    scratch_files: int = 16384
    # False runs the foundation's plain child (no uid drop, namespaces or in-child limits):
    # only for measuring what the hardened sandbox costs (bench/sandbox_overhead.py).
    confine: bool = True

    @property
    def cpu_s(self) -> int:
        """CPU seconds for the child's whole life: a backstop behind the wall-clock limits
        (XLA may run on every core, so it is not the wall-clock limit itself)."""
        return int(self.startup_s + 2 * self.total_s) + 1

    def in_child(self) -> ChildLimits:
        """What the child applies to itself (``grader.child.confine.Policy`` carries it)."""
        from grader.child.confine import ChildLimits
        return ChildLimits(self.cpu_s, self.memory_mib, self.file_mib, self.scratch_mib, self.scratch_files)
