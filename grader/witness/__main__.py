"""The witness process, started and confined as the submission's child is (by
``grader.sandbox.process.ChildProcess`` with ``grader.sandbox.witness``'s role: exec'd with
``python -I`` and the grader's own folders, or forked from the warm process that imported JAX
for the children), with the exercise's device count in ``JAX_NUM_CPU_DEVICES``. It imports no
submission and runs no Python of one.

Its command line: inbox, outbox, the confinement policy ("" for none: the reference and the
variants, the instructor's code), then its compilation cache ("" for none). It confines itself
before JAX starts its backend (namespaces are per thread, and the backend starts threads), greets,
then answers ``witness`` requests until its input closes or it is asked to ``exit``.
"""
from __future__ import annotations

import os
import sys


def main() -> None:
    inbox, outbox, policy, compile_cache = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    from grader.errors import ChannelClosed
    from grader.wire import Failed, frame, read_message, write_frame, write_message
    sys.stdout = sys.stderr  # what JAX prints never enters the channel
    try:
        import jax
        for fd in (inbox, outbox):
            os.set_inheritable(fd, False)
        protections = {}
        if policy:
            from grader.child.confine import Policy, confine
            protections = confine(Policy.from_json(policy))
            if compile_cache:
                compile_cache = _kept_cache(compile_cache, protections)
        # Set here, not read from the environment: a witness forked from the children's warm process
        # inherits JAX as the children's environment configured it (their cache).
        jax.config.update("jax_compilation_cache_dir", compile_cache or None)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
        jax.config.update("jax_persistent_cache_enable_xla_caches", "none")  # else the key holds the cache's path
        from grader.child.jax_patches import share_ir_context
        from grader.witness.rerun import rerun, skip_lapack_registration
        skip_lapack_registration()
        share_ir_context()  # one MLIR context for every program it reads and lowers, as the child has
        jax.devices()  # the backend starts now, confined, before the first account
    except BaseException as error:  # noqa: BLE001 (said to the grader, which then has no witness)
        failed: Failed = {"op": "failed", "error": f"{type(error).__name__}: {error}"}
        write_message(outbox, failed)
        os._exit(70)
    write_message(outbox, {"op": "ready", "protections": protections})
    while True:
        try:
            request = read_message(inbox)
        except ChannelClosed:
            break
        if request.get("op") == "exit":
            break
        try:
            reply = rerun(request.get("account"), request.get("arguments"), request.get("substitute"))
        except Exception as error:  # noqa: BLE001 (an account that does not run: the child's doing)
            reply = {"ok": False, "unverifiable": f"{type(error).__name__}: {error}"[:500]}
        write_frame(outbox, frame(reply))
    sys.stderr.flush()
    os._exit(0)


def _kept_cache(cache: str, protections: dict[str, dict[str, object]]) -> str:
    """``cache``, where the confinement just applied leaves it unwritable to every sandboxed
    process, this one and the children alike: a uid of its own (the cache is the grader's, 0750
    to the witnesses' group), or Landlock (all of them write only beneath their scratch); else ""
    (a read-only mount here alone would not do: a child of the grader's own user could still
    write it, for the next student's witness to read). Said in ``protections["witness_cache"]``."""
    kept = bool(protections.get("user", {}).get("active") or protections.get("landlock", {}).get("active"))
    protections["witness_cache"] = {"active": kept, "detail": f"{cache}, read-only to it and to every child" if kept
                                    else "none: nothing here would keep a sandboxed process from writing there, so "
                                    "every grading compiles its programs anew"}
    return cache if kept else ""


if __name__ == "__main__":
    main()
