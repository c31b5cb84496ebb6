"""The child's entry point: ``main``, which ``grader.sandbox.process.boot`` runs in an exec'd
child and ``grader.sandbox.pool`` in one forked from the zygote. ``start`` silences what JAX prints
while it starts (grader.child.startup_output), patches JAX, makes the request server, confines
the process, forgets the grader's modules, then serves.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from grader.child.jax_patches import remember_compilations, share_ir_context
from grader.child.server import Child
from grader.child.startup_output import silence
from grader.wire import Failed, write_message

if TYPE_CHECKING:
    from grader.child.confine import Policy


def _forget_grader() -> None:
    """Drop the grader's modules from ``sys.modules``, and its folder from ``sys.path`` where
    that folder holds nothing else the child needs (a checkout; site-packages stays): an
    ``import grader.child.server`` in the submission then gets a fresh copy (or nothing), and
    patching that copy touches nothing the running grader uses."""
    from grader.child import search_path
    folder = search_path.grader_only
    for name in [n for n in sys.modules if n == "grader" or n.startswith("grader.")]:
        del sys.modules[name]
    if folder is not None:
        sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != os.path.realpath(folder)]


def main(first_line: float | None = None) -> None:
    """``python -I -c CODE inbox outbox [policy]`` (CODE: ``grader.sandbox.process.boot``, which
    notes the instant of its ``first_line``): the child, exec'd or forked from a warm process."""
    imported = time.monotonic()  # this module imported (JAX with it, unless a warm process had)
    policy = None
    if len(sys.argv) > 3:
        from grader.child.confine import Policy
        policy = Policy.from_json(sys.argv[3])
    start(int(sys.argv[1]), int(sys.argv[2]), policy,
          {"first_line": imported if first_line is None else first_line, "imported": imported})


def start(inbox: int, outbox: int, policy: Policy | None = None, started: dict[str, float] | None = None) -> None:
    """Import JAX (backend not started), put the observers in place, confine the process as
    ``policy`` (a ``grader.child.confine.Policy``) says, then serve; never returns."""
    try:
        kept = silence()  # JAX's and its plugins' startup output is not the submission's
        import jax  # noqa: F401  (imported by the patches below anyway; here to time it)
        jax_at = time.monotonic()
        for fd in (inbox, outbox):
            os.set_inheritable(fd, False)  # programs the submission runs do not get the channel
        patched = [*remember_compilations(), *share_ir_context()]
        child = Child(inbox, outbox)
        child.pins.adopt(patched)  # a forked child's pins were taken before them, in the zygote
        if policy is not None:
            from grader.child.confine import confine
            child.protections = confine(replace(policy, keep_fds=(*policy.keep_fds, *kept)))
        _forget_grader()
        child.started = {**(started or {}), "jax": jax_at, "set_up": time.monotonic()}
    except BaseException as error:
        failed: Failed = {"op": "failed", "error": f"{type(error).__name__}: {error}"}
        write_message(outbox, failed)
        os._exit(70)
    child.serve()
    sys.stdout.flush()
    os._exit(0)  # threads the submission left behind must not keep the process alive


if __name__ == "__main__":
    main()
