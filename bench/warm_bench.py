"""The warm path of `jaxgrade check` (#43 point 2, grader.warm), paired rounds: each round stops
the service, checks a copy of the seed exercise's reference (in-process: the first check, which
starts the service), waits until the service is ready, edits the copy (a comment appended) and
checks it again (through the service), then times a bare `python -c "import jax; jax.devices()"`
and the same check with --no-daemon (in-process, starting no service: what the first check cost
before the warm path).
Prints the medians. BENCH_RUNS rounds (default 7); a runtime folder of its own, removed after.
"""
from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO / "exercises" / "named_sharding_replicated" / "reference.py"
JAXGRADE = str(Path(sys.executable).parent / "jaxgrade")
RUNS = int(os.environ.get("BENCH_RUNS", "7"))


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.monotonic()
    done = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr.decode()
    return took


def stop(folder: Path) -> None:
    for path in folder.glob("warm-*.pid"):
        try:
            os.kill(int(path.read_text()), signal.SIGTERM)
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + 15
    while list(folder.glob("warm-*.pid")) and time.monotonic() < deadline:
        time.sleep(0.05)


def rss_tree(pid: int) -> list[str]:
    """The resident memory of ``pid`` and of its children (the zygote), each as "pid: N MiB"."""
    found = []
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        found.append(f"{pid}: {int(status.split('VmRSS:')[1].split()[0]) // 1024} MiB")
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except (OSError, IndexError, ValueError):
        return found
    for child in children:
        found += [f"child {line}" for line in rss_tree(int(child))]
    return found


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="jgw-bench-", dir="/tmp"))
    work = Path(tempfile.mkdtemp(prefix="jgw-work-"))
    env = {k: v for k, v in os.environ.items() if k not in ("JAXGRADE_NO_DAEMON", "CI")}
    env.update(NO_COLOR="1", JAXGRADE_RUNTIME_DIR=str(folder))
    bare_env = {**env, "JAX_PLATFORMS": "cpu", "JAX_NUM_CPU_DEVICES": "8"}
    submission = work / "solution.py"
    firsts, seconds, bares, alones = [], [], [], []
    try:
        for round_ in range(RUNS):
            stop(folder)
            shutil.copy(REFERENCE, submission)
            firsts.append(timed([JAXGRADE, "check", "solution.py"], env, work))
            deadline = time.monotonic() + 120
            while sum(p.read_text().count(" ready") for p in folder.glob("warm-*.log")) <= round_:
                assert time.monotonic() < deadline, "the service did not become ready"
                time.sleep(0.05)
            time.sleep(1.0)  # a student reads the report, edits
            with open(submission, "a") as handle:
                handle.write(f"# edit {round_}\n")
            seconds.append(timed([JAXGRADE, "check", "solution.py"], env, work))
            bares.append(timed([sys.executable, "-c", "import jax; jax.devices()"], bare_env, work))
            alones.append(timed([JAXGRADE, "check", "solution.py", "--no-daemon"], env, work))
            print(f"round {round_ + 1}: first {firsts[-1]:.3f} s, second (edited) {seconds[-1]:.3f} s, "
                  f"bare import {bares[-1]:.3f} s, --no-daemon {alones[-1]:.3f} s", flush=True)
        served = sum(p.read_text().count(" served ") for p in folder.glob("warm-*.log"))
        for path in folder.glob("warm-*.pid"):
            print("service memory (VmRSS):", *rss_tree(int(path.read_text())))
    finally:
        stop(folder)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    f, s, b = statistics.median(firsts), statistics.median(seconds), statistics.median(bares)
    print(f"medians of {RUNS}: first check {f:.3f} s ({f / b:.2f}x), second check {s:.3f} s ({s / b:.2f}x), "
          f"bare `import jax; jax.devices()` {b:.3f} s, --no-daemon {statistics.median(alones):.3f} s; "
          f"checks served by the service: {served} of {RUNS}")


if __name__ == "__main__":
    main()
