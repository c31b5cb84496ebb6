"""Holds memory no process limit counts: memfd pages (each file below the per-file size limit,
never mapped, so RLIMIT_AS sees none of it), {MIB} MiB in all, from the call."""
import os

CHUNK = b"\1" * (16 << 20)


def replicated_sharding_value(x):
    held = []
    for _ in range({MIB} // 48):
        memfd = os.memfd_create("hog", 0)
        for _ in range(3):
            os.write(memfd, CHUNK)
        held.append(memfd)
    print("HELD", len(held) * 48, "MiB", flush=True)
    return x.sum()
