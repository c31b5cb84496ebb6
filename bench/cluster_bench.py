"""Grading on a Dask cluster against grading on this machine, side by side, one run.

    .venv/bin/python bench/cluster_bench.py [--count 200] [--rounds 4] [--json FILE]

``--count`` submissions (made as in bench/batch_bench.py: half right, half wrong, none of the
limits_* variants, each unique) are graded with ``jaxgrade grade --regrade`` as a subprocess
(start-up, intake, reports, gradebook and summary included) four ways:

    local -j 1            one grading thread on this machine
    cluster of 1 worker   ``--scheduler``: one worker process with one thread
    local -j 2            two grading threads
    cluster of 2 workers  two worker processes with one thread each

The clusters are two ``distributed.LocalCluster``s of worker processes (each with its nanny,
as ``dask worker`` starts them) on loopback, both up for the whole run (an idle worker costs
next to nothing). The machine is shared and its load drifts, so the submissions are split into
``--rounds`` classes and every round grades one class all four ways, in an order rotated from
round to round; each configuration's time is the sum over the rounds (so every configuration
pays ``--rounds`` start-ups). Workers keep their warm pool and prepared exercise between
batches, as a long-running cluster does; the first batch on the fresh workers (8 submissions)
is timed separately as the cold start.

Reported: wall time and throughput of each; the cluster's scaling from 1 to 2 workers; its
overhead against local grading at the same parallelism. This machine has 2 cores shared with
other work, so 2 workers is the most it can show; it says nothing about many machines beyond
the per-submission cost the cluster adds.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
BIN = Path(sys.executable).parent
EXERCISE = "named_sharding_replicated"
WARMUP = 8

from batch_bench import make_class  # noqa: E402  (the same class of submissions)


def grade(source: Path, out: Path, *options: str) -> float:
    """Wall time of one ``jaxgrade grade --regrade`` run; fails loudly if anything was not graded."""
    command = [str(BIN / "jaxgrade"), "grade", str(source), "-e", EXERCISE, "-o", str(out), "--regrade", *options]
    started = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    elapsed = time.perf_counter() - started
    if run.returncode not in (0, 1) or "failed in the grader" in run.stdout:
        raise SystemExit(f"{' '.join(command)} failed ({run.returncode}):\n{run.stdout}\n{run.stderr[-3000:]}")
    return elapsed


def measure(count: int, rounds: int, work: Path) -> dict[str, float]:
    from distributed import LocalCluster

    os.environ.setdefault("JAXGRADE_CACHE", str(work / "cache"))  # workers and local runs share it
    per_round = [count // rounds + (1 if r < count % rounds else 0) for r in range(rounds)]
    classes = [work / f"class{r}" for r in range(rounds)]
    for r, folder in enumerate(classes):
        make_class(folder, per_round[r], offset=sum(per_round[:r]))
    make_class(work / "warmup", WARMUP, offset=count)
    figures: dict[str, float] = {"count": count, "rounds": rounds, "cores": os.cpu_count() or 1}

    grade(work / "warmup", work / "out-warmup", "-j", "2")  # fills the compilation cache from the reference, once
    options = {"local_1": ("-j", "1"), "local_2": ("-j", "2")}
    clusters = []
    try:
        for workers in (1, 2):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   host="127.0.0.1", silence_logs=logging.ERROR)
            clusters.append(cluster)
            options[f"cluster_{workers}"] = ("--scheduler", cluster.scheduler_address)
            figures[f"cold_start_{workers}_s"] = grade(work / "warmup", work / "out-warmup",
                                                       "--scheduler", cluster.scheduler_address)
        names = ["local_1", "cluster_1", "local_2", "cluster_2"]
        for name in names:
            figures[f"{name}_s"] = 0.0
        for r, folder in enumerate(classes):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                figures[f"{name}_s"] += grade(folder, work / f"out-{name}", *options[name])
            print(f"round {r + 1}/{rounds}: " + ", ".join(f"{n} {figures[n + '_s']:.1f} s" for n in names), flush=True)
    finally:
        for cluster in clusters:
            cluster.close()
    figures.update(scaling=figures["cluster_1_s"] / figures["cluster_2_s"],
                   local_scaling=figures["local_1_s"] / figures["local_2_s"],
                   overhead_1=figures["cluster_1_s"] / figures["local_1_s"] - 1,
                   overhead_2=figures["cluster_2_s"] / figures["local_2_s"] - 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds the submissions are split into")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="jaxgrade-cluster-bench-"))
    try:
        figures = measure(args.count, max(1, min(args.rounds, args.count)), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    n = args.count
    print()
    print(f"{n} submissions of {EXERCISE}, {figures['cores']} cores, `jaxgrade grade --regrade` in "
          f"{figures['rounds']} interleaved rounds, wall time summed:\n")
    print("| configuration | time | submissions/s | vs local at the same parallelism |\n|---|---|---|---|")
    for label, key in (("local -j 1", "local_1"), ("cluster: 1 worker × 1 thread", "cluster_1"),
                       ("local -j 2", "local_2"), ("cluster: 2 workers × 1 thread", "cluster_2")):
        seconds = figures[f"{key}_s"]
        versus = "" if key.startswith("local") else f"{100 * figures['overhead_' + key[-1]]:+.0f}%"
        print(f"| {label} | {seconds:.1f} s | {n / seconds:.2f} | {versus} |")
    print(f"\nscaling 1 → 2 workers: ×{figures['scaling']:.2f} "
          f"(local -j 1 → -j 2: ×{figures['local_scaling']:.2f}); "
          f"first batch of {WARMUP} on fresh workers: {figures['cold_start_1_s']:.1f} s (1 worker), "
          f"{figures['cold_start_2_s']:.1f} s (2 workers)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
