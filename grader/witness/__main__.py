"""The witness process (``grader.witness.client`` exec's it with ``python -I`` and the grader's
own folders, ``grader.importpath.boot``, or forks it from a warm process that has imported JAX
and runs no submission) with the exercise's device count in ``JAX_NUM_CPU_DEVICES``. It answers
``witness`` requests on the channel its command line names (inbox, outbox, then its memory limit
in MiB and its compilation cache) until its input closes. It imports no submission and runs no
Python of one."""
from __future__ import annotations

import os
import resource
import sys


def main() -> None:
    inbox, outbox, memory_mib, compile_cache = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    limit = memory_mib << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    from grader.errors import ChannelClosed
    from grader.wire import frame, read_message, write_frame
    from grader.witness.rerun import load_lapack_on_demand, rerun
    sys.stdout = sys.stderr  # what JAX prints never enters the channel
    import jax
    # Set here, not read from the environment: a witness forked from the children's warm process
    # inherits JAX as the children's environment configured it (their cache, which they can write).
    jax.config.update("jax_compilation_cache_dir", compile_cache or None)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    jax.config.update("jax_persistent_cache_enable_xla_caches", "none")  # else the key holds the cache's path
    load_lapack_on_demand()
    jax.devices()  # JAX and its backend start now, while the child runs, not at the first account
    while True:
        try:
            request = read_message(inbox)
        except ChannelClosed:
            return
        try:
            reply = rerun(request.get("account"), request.get("arguments"), request.get("substitute"))
        except Exception as error:  # noqa: BLE001 (an account that does not run: the child's doing)
            reply = {"ok": False, "error": f"{type(error).__name__}: {error}"[:500]}
        write_frame(outbox, frame(reply))


if __name__ == "__main__":
    main()
