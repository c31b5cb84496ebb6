"""Fills every place it may write (its working folder, /tmp, /var/tmp, /dev/shm) with files of
4 MiB (under the per-file cap) until the disk refuses or {STOP_MIB} MiB are written; where
nothing refused, it waits for the grader to stop it. Then it would answer correctly."""
import os
import time

import jax.numpy as jnp

CHUNK = b"x" * (1 << 20)


def _fill(stop_mib: int) -> tuple[int, bool]:
    written, refused = 0, False
    for place in (".", "/tmp", "/var/tmp", "/dev/shm"):
        for number in range(stop_mib):
            try:
                with open(os.path.join(place, f"fill-{number}.bin"), "wb") as handle:
                    for _ in range(4):
                        handle.write(CHUNK)
                        written += len(CHUNK)
            except OSError as error:
                print("REFUSED", place, error.strerror, flush=True)
                refused = True
                break
            if written >= stop_mib << 20:
                return written, refused
    return written, refused


def replicated_sharding_value(x):
    written, refused = _fill({STOP_MIB})
    print(f"WROTE {written >> 20} MiB", flush=True)
    if not refused:
        time.sleep(30)  # a watched folder: the grader must notice and stop this process
    return jnp.sum(x)
