"""Leaves processes behind: a child in its own session, and a double-forked daemon. Each one
names itself (its comm, which the grader's /proc shows whatever PID namespace it lives in)
and prints that name, so a test can look for it from outside."""
import ctypes
import os
import secrets
import shutil
import subprocess
import time

PR_SET_NAME = 15

# A program that outlives us in a new session, with an empty environment (no marker). Its name is
# that of the file it runs: a copy of sleep.
sleeper_name = "jgleft" + secrets.token_hex(4)
shutil.copy(shutil.which("sleep"), sleeper_name)
sleeper = subprocess.Popen([os.path.abspath(sleeper_name), "300"], start_new_session=True, env={},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"LEFT-BEHIND {sleeper_name}", flush=True)

# The classic daemon: fork, setsid, fork again, parent exits.
daemon_name = "jgleft" + secrets.token_hex(4)
first = os.fork()
if first == 0:
    os.setsid()
    second = os.fork()
    if second == 0:
        ctypes.CDLL(None).prctl(PR_SET_NAME, daemon_name.encode())
        for fd in (0, 1, 2):
            os.close(fd)
        while True:
            time.sleep(0.5)
    os._exit(0)
os.waitpid(first, 0)
print(f"LEFT-BEHIND {daemon_name}", flush=True)
time.sleep(0.3)  # both have named themselves by now


def replicated_sharding_value(x):
    return x.sum()
