"""The warm path of `jaxgrade check` (#43 point 2, grader.warm), in paired rounds. Each round is
a student's session: the service stopped, a copy of the seed exercise's reference checked (the
first check: in-process, it starts the service), then, once the service is ready, SESSION-1 more
checks of the copy, each after an edit (a comment appended; served by the service); each check
is paired with a bare `python -c "import jax; jax.devices()"` run right after it, and each round
ends with the same check with --no-daemon (in-process, starting no service: what every check
cost before the warm path). Prints the medians: the first check, the later ones, and every
check of the sessions, each against the bare imports.

``--memory N``: then N checks through one service (the reference and a wrong variant in turn,
each edited so no two files are alike), the resident and proportional memory of the service and
its zygote sampled after N/10 checks and after the last: a warm service must not grow.

BENCH_RUNS rounds (default 7), BENCH_SESSION checks a round (default 5); a runtime folder of its
own, removed after.
"""
from __future__ import annotations

import argparse
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
WRONG = REPO / "exercises" / "named_sharding_replicated" / "wrong" / "structure_no_placement.py"
JAXGRADE = str(Path(sys.executable).parent / "jaxgrade")
RUNS = int(os.environ.get("BENCH_RUNS", "7"))
SESSION = int(os.environ.get("BENCH_SESSION", "5"))


def timed(command: list[str], env: dict[str, str], cwd: Path, codes: tuple[int, ...] = (0,)) -> float:
    started = time.monotonic()
    done = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.monotonic() - started
    assert done.returncode in codes, done.stderr.decode()
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


def memory_tree(pid: int) -> list[tuple[int, int, int]]:
    """(pid, VmRSS KiB, Pss KiB) of ``pid`` and of its descendants (the zygote and its children)."""
    found = []
    try:
        rss = int(Path(f"/proc/{pid}/status").read_text().split("VmRSS:")[1].split()[0])
        pss = int(Path(f"/proc/{pid}/smaps_rollup").read_text().split("Pss:")[1].split()[0])
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except (OSError, IndexError, ValueError):
        return found
    found.append((pid, rss, pss))
    for child in children:
        found += memory_tree(int(child))
    return found


def service_memory(folder: Path) -> str:
    """The service's and its descendants' memory, as "pid: RSS / PSS MiB" each, and the PSS total."""
    rows = [row for path in folder.glob("warm-*.pid") for row in memory_tree(int(path.read_text()))]
    shown = ", ".join(f"{pid}: {rss // 1024} / {pss // 1024} MiB" for pid, rss, pss in rows)
    return f"{shown}; PSS in all {sum(pss for _, _, pss in rows) // 1024} MiB"


def readies(folder: Path) -> int:
    """How many times a service said it was ready in ``folder`` (every service of the bench's)."""
    return sum(p.read_text().count(" ready") for p in folder.glob("warm-*.log"))


def wait_ready(folder: Path, count: int) -> None:
    deadline = time.monotonic() + 120
    while readies(folder) < count:
        assert time.monotonic() < deadline, "the service did not become ready"
        time.sleep(0.05)


def served(folder: Path) -> int:
    return sum(p.read_text().count(" served ") for p in folder.glob("warm-*.log"))


def sessions(folder: Path, work: Path, env: dict[str, str], bare_env: dict[str, str]) -> None:
    submission = work / "solution.py"
    firsts, laters, bares, alones = [], [], [], []
    ratios: dict[str, list[float]] = {"first": [], "later": [], "all": []}
    for round_ in range(RUNS):
        stop(folder)
        shutil.copy(REFERENCE, submission)
        checks = [timed([JAXGRADE, "check", "solution.py"], env, work)]
        wait_ready(folder, round_ + 1)
        pairs = [timed([sys.executable, "-c", "import jax; jax.devices()"], bare_env, work)]
        for edit in range(SESSION - 1):
            time.sleep(1.0)  # a student reads the report, edits
            with open(submission, "a") as handle:
                handle.write(f"# edit {round_}.{edit}\n")
            checks.append(timed([JAXGRADE, "check", "solution.py"], env, work))
            pairs.append(timed([sys.executable, "-c", "import jax; jax.devices()"], bare_env, work))
        alones.append(timed([JAXGRADE, "check", "solution.py", "--no-daemon"], env, work))
        firsts.append(checks[0])
        laters += checks[1:]
        bares += pairs
        ratios["first"].append(checks[0] / pairs[0])
        ratios["later"] += [c / b for c, b in zip(checks[1:], pairs[1:])]
        ratios["all"] += [c / b for c, b in zip(checks, pairs)]
        print(f"round {round_ + 1}: checks " + ", ".join(f"{c:.3f}" for c in checks) + " s; bare imports "
              + ", ".join(f"{b:.3f}" for b in pairs) + f" s; --no-daemon {alones[-1]:.3f} s", flush=True)
    print("service memory (VmRSS / PSS):", service_memory(folder))
    count = served(folder)
    stop(folder)
    median = statistics.median
    print(f"medians of {RUNS} sessions of {SESSION} checks (each ratio the median of the paired ratios): "
          f"first check {median(firsts):.3f} s ({median(ratios['first']):.2f}x a bare import), later checks "
          f"{median(laters):.3f} s ({median(ratios['later']):.2f}x), every check {median(ratios['all']):.2f}x; "
          f"bare `import jax; jax.devices()` {median(bares):.3f} s; --no-daemon {median(alones):.3f} s; "
          f"checks served by the service: {count} of {RUNS * SESSION}; load {os.getloadavg()[0]:.1f}")


def memory(folder: Path, work: Path, env: dict[str, str], checks: int) -> None:
    """``checks`` checks through one service, its memory sampled early and at the end."""
    stop(folder)
    sources = [REFERENCE.read_text(), WRONG.read_text()]
    submission = work / "solution.py"
    submission.write_text(sources[0])
    earlier = readies(folder)  # the sessions' services said so too
    timed([JAXGRADE, "check", "solution.py"], env, work, codes=(0, 1))
    wait_ready(folder, earlier + 1)
    early = max(1, checks // 10)
    before, started = served(folder), time.monotonic()
    for index in range(checks):
        submission.write_text(sources[index % 2] + f"\n# check {index}\n")
        timed([JAXGRADE, "check", "solution.py"], env, work, codes=(0, 1))
        if index + 1 == early:
            time.sleep(0.5)  # the check's child given back (the service settles it after answering)
            print(f"after {early} checks: {service_memory(folder)}", flush=True)
    elapsed = time.monotonic() - started
    time.sleep(0.5)  # the service logs "served" after its answer: the last check's line comes later
    print(f"after {checks} checks ({elapsed:.0f} s; served by the service: "
          f"{served(folder) - before} of {checks}): {service_memory(folder)}")
    stop(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memory", type=int, default=0, metavar="N", help="N checks through one service after")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="jgw-bench-", dir="/tmp"))
    work = Path(tempfile.mkdtemp(prefix="jgw-work-"))
    env = {k: v for k, v in os.environ.items() if k not in ("JAXGRADE_NO_DAEMON", "CI")}
    env.update(NO_COLOR="1", JAXGRADE_RUNTIME_DIR=str(folder))
    bare_env = {**env, "JAX_PLATFORMS": "cpu", "JAX_NUM_CPU_DEVICES": "8"}
    try:
        sessions(folder, work, env, bare_env)
        if args.memory:
            memory(folder, work, env, args.memory)
    finally:
        stop(folder)
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
