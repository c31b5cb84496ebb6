"""`make bench`: jaxgrade's speed, as ratios against baselines run side by side in this run.

The machines are shared and noisy, so every figure is a median of interleaved runs (the
candidate and its baseline alternate, so a burst of load hits both). The other benchmarks
(bench/*_bench.py, bench/sandbox_overhead.py) run after this one when present;
bench/verdicts.py is not a benchmark (it compares verdicts before and after a change).
``bench/bench.py --timings`` runs only the check latency, with its breakdown: where one check's
wall time goes (JAXGRADE_TIMINGS=1, grader/timings.py), each line the median of the runs.
``bench/bench.py --scaling`` runs only the class run's scaling row (issue #57).
"""
from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO / "exercises" / "named_sharding_replicated" / "reference.py"
BIN = Path(sys.executable).parent
RUNS = int(os.environ.get("BENCH_RUNS", "9"))

BARE = ("import jax.numpy as jnp, sys; sys.path.insert(0, {folder!r}); "
        "from reference import replicated_sharding_value as f; f(jnp.arange(7, dtype=jnp.float32)).block_until_ready()")


TIMING = re.compile(r"^ *(\d+\.\d{3}|\?)  (.+)$")


def timed(command: list[str], env: dict[str, str],
          breakdowns: list[list[tuple[float | None, str]]] | None = None) -> float:
    """Wall seconds of ``command``; with ``breakdowns``, its JAXGRADE_TIMINGS lines added to them."""
    started = time.perf_counter()
    done = subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                          timeout=300)
    seconds = time.perf_counter() - started
    if breakdowns is not None:
        lines = [TIMING.match(line) for line in done.stderr.splitlines()]
        breakdowns.append([(None if m[1] == "?" else float(m[1]), m[2]) for m in lines if m])
    return seconds


def median_breakdown(breakdowns: list[list[tuple[float | None, str]]]) -> None:
    """Each line of the breakdown (JAXGRADE_TIMINGS=1) as the median of the runs (? where none had a number)."""
    print(f"where a check's time goes (JAXGRADE_TIMINGS=1, each line the median of {len(breakdowns)}):")
    for index, (_, label) in enumerate(breakdowns[0]):
        values = [run[index][0] for run in breakdowns if len(run) > index and run[index][0] is not None]
        shown = f"{statistics.median(values):.3f}" if values else "?"
        print(f"{shown:>8}  {label}")


def check_latency() -> None:
    """`jaxgrade check` on the reference vs a bare Python that imports JAX and runs it once
    (with the same 8 simulated devices). Goals: check ≤ 1.5 s median, ratio < 1.5."""
    # In-process checks (the first check's cost); the warm service's is bench/warm_bench.py's.
    env = {**os.environ, "JAXGRADE_CACHE": tempfile.mkdtemp(prefix="jaxgrade-bench-"), "JAXGRADE_NO_DAEMON": "1"}
    check = [str(BIN / "jaxgrade"), "check", str(REFERENCE), "--format", "json"]
    bare = [sys.executable, "-c", BARE.format(folder=str(REFERENCE.parent))]
    first = timed(check, env)  # fills the compilation cache from the reference, once
    checks, bares, breakdowns = [], [], []
    for _ in range(RUNS):
        checks.append(timed(check, {**env, "JAXGRADE_TIMINGS": "1"}, breakdowns))
        bares.append(timed(bare, {**env, "JAX_NUM_CPU_DEVICES": "8"}))
    c, b = statistics.median(checks), statistics.median(bares)
    print(f"jaxgrade check (reference), median of {RUNS}: {c:.3f} s   (first run, filling the cache: {first:.3f} s)")
    print(f"bare python -c 'import jax; run reference', median of {RUNS}: {b:.3f} s")
    print(f"ratio check/bare: {c / b:.2f}   (goals: check <= 1.5 s, ratio < 1.5)")
    median_breakdown(breakdowns)


# A class run in this process's child, its CPU split into the grader's own and its descendants'.
GRADE_SHARE = ("import resource, sys; from grader.cli import main; code = main(sys.argv[1:]); "
               "own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)); "
               "print('CPU', own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime, file=sys.stderr); "
               "sys.exit(code)")


def scaling() -> None:
    """A warm class run (``grade --regrade``, the class of batch_bench.py, 8 submissions a core,
    at least 33) at -j 1, 2, 4, ... up to this machine's cores, interleaved, medians of
    BENCH_SCALING_RUNS (3): wall time, speed-up over -j 1, and the grader's own process's share
    of the run's CPU (the serial part: issue #57)."""
    sys.path.insert(0, str(REPO / "bench"))
    from batch_bench import EXERCISE, make_class
    cores = os.cpu_count() or 1
    jobs = sorted({*(2 ** k for k in range(cores.bit_length()) if 2 ** k <= cores), cores})
    runs = int(os.environ.get("BENCH_SCALING_RUNS", "3"))
    env = {**os.environ, "JAXGRADE_NO_DAEMON": "1"}
    with tempfile.TemporaryDirectory(prefix="jaxgrade-scaling-") as scratch:
        folder, out = Path(scratch) / "class", Path(scratch) / "out"
        size = len(make_class(folder, max(33, 8 * cores)))
        command = [sys.executable, "-c", GRADE_SHARE, "grade", str(folder), "-e", EXERCISE, "-o", str(out)]
        subprocess.run([*command, "-j", str(cores)], check=True, env=env, capture_output=True, timeout=900)  # fills caches
        figures: dict[int, list[tuple[float, float]]] = {j: [] for j in jobs}
        for _ in range(runs):
            for j in jobs:
                started = time.perf_counter()
                done = subprocess.run([*command, "-j", str(j), "--regrade"], check=True, env=env, capture_output=True,
                                      text=True, timeout=900)
                own, kids = map(float, done.stderr.rsplit("CPU ", 1)[1].split())
                figures[j].append((time.perf_counter() - started, own / (own + kids)))
    one = statistics.median(w for w, _ in figures[jobs[0]])
    print(f"warm class run of {size} ({EXERCISE}, --regrade), medians of {runs}, load {os.getloadavg()[0]:.1f}:")
    print(f"{'workers':>8} {'wall':>8} {'speed-up':>9} {'per submission':>15} {'grader own CPU':>15}")
    for j in jobs:
        wall = statistics.median(w for w, _ in figures[j])
        share = statistics.median(s for _, s in figures[j])
        print(f"{'-j ' + str(j):>8} {wall:7.2f}s {one / wall:8.2f}x {wall / size:14.3f}s {100 * share:14.1f}%")


def main() -> int:
    if "--scaling" in sys.argv[1:]:  # that row alone (on a larger machine, say)
        scaling()
        return 0
    print("== check latency")
    check_latency()
    if "--timings" in sys.argv[1:]:
        return 0
    print("\n== class run scaling", flush=True)
    scaling()
    # No process outlives a measured command: a small class run's variants, graded in the
    # background after it (grader.batch.warming), would share the CPU with the next one. The
    # benches of the warm service, the notebook check and Otter set the switch themselves.
    env = {**os.environ, "JAXGRADE_NO_DAEMON": "1"}
    for script in sorted(REPO.glob("bench/*.py")):
        if script.name not in ("bench.py", "verdicts.py") and not script.name.startswith("_"):
            print(f"\n== {script.stem}", flush=True)
            subprocess.run([sys.executable, str(script)], check=False, env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
