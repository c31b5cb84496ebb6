"""The witness process (``grader.witness.client`` starts it with ``python -I`` and the grader's own
folders, ``grader.importpath.boot``)
with the exercise's device count in ``JAX_NUM_CPU_DEVICES``. It answers ``witness`` requests
on stdin/stdout until its input closes. It imports no submission and runs no Python of one."""
from __future__ import annotations

import sys


def main() -> None:
    from grader.errors import ChannelClosed
    from grader.wire import frame, read_message, write_frame
    from grader.witness.rerun import rerun
    inbox, outbox = sys.stdin.fileno(), sys.stdout.fileno()
    sys.stdout = sys.stderr  # what JAX prints never enters the channel
    import jax
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
