"""Leaves processes behind: a child in its own session, and a double-forked daemon."""
import os
import subprocess
import time

# A program that outlives us in a new session, with an empty environment (no marker).
sleeper = subprocess.Popen(["sleep", "300"], start_new_session=True, env={}, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
print(f"LEFT-BEHIND {sleeper.pid}", flush=True)

# The classic daemon: fork, setsid, fork again, parent exits.
reader, writer = os.pipe()
first = os.fork()
if first == 0:
    os.setsid()
    second = os.fork()
    if second == 0:
        os.close(reader)
        os.write(writer, f"{os.getpid()}\n".encode())
        os.close(writer)
        for fd in (0, 1, 2):
            os.close(fd)
        while True:
            time.sleep(0.5)
    os._exit(0)
os.close(writer)
os.waitpid(first, 0)
print(f"LEFT-BEHIND {os.read(reader, 64).decode().strip()}", flush=True)


def replicated_sharding_value(x):
    return x.sum()
