"""Grading on a Dask cluster against grading on this machine, side by side, one run.

    .venv/bin/python bench/cluster_bench.py [--count 200] [--json FILE]

``--count`` submissions (made as in bench/batch_bench.py: half right, half wrong, none of the
limits_* variants, each unique) are graded with ``jaxgrade grade --regrade`` as a subprocess,
start-up, intake, reports, gradebook and summary included, four ways, interleaved:

    local -j 1            one grading thread on this machine
    cluster, 1 worker     ``--scheduler``: one worker process with one thread
    local -j 2
    cluster, 2 workers    two worker processes with one thread each

The cluster is a ``distributed.LocalCluster`` of worker processes (each with its nanny, as
``dask worker`` starts them) on loopback, scaled from 1 to 2. Workers keep their warm pool and
prepared exercise between batches, as a long-running cluster does; a small warm-up batch runs
on each new worker first and its time is reported as the cold start.

Reported: wall time and throughput of each; the cluster's scaling from 1 to 2 workers; its
overhead against local grading at the same parallelism. This machine has 2 cores shared with
other work, and the grading process and the children compete for them: 2 is the most any
configuration here can scale to, and the figure says nothing about more workers on more
machines beyond "the per-submission overhead".
"""
from __future__ import annotations

import argparse
import json
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    from distributed import Client, LocalCluster

    work = Path(tempfile.mkdtemp(prefix="jaxgrade-cluster-bench-"))
    try:
        os.environ.setdefault("JAXGRADE_CACHE", str(work / "cache"))  # workers and local runs share it
        source, warmup = work / "class", work / "warmup"
        make_class(source, args.count)
        make_class(warmup, 8, offset=args.count)
        figures: dict[str, float] = {}

        grade(warmup, work / "out-warmup", "-j", "2")  # fills the compilation cache from the reference, once
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                          host="127.0.0.1") as cluster, Client(cluster) as client:
            address = cluster.scheduler_address
            started = time.perf_counter()
            grade(warmup, work / "out-warmup", "--scheduler", address)
            figures["cold_start_1_s"] = time.perf_counter() - started
            figures["local_1_s"] = grade(source, work / "out-local-1", "-j", "1")
            figures["cluster_1_s"] = grade(source, work / "out-cluster-1", "--scheduler", address)
            print(f"1 thread: local {figures['local_1_s']:.1f} s, cluster of 1 worker {figures['cluster_1_s']:.1f} s",
                  flush=True)

            cluster.scale(2)
            client.wait_for_workers(2, timeout=120)
            started = time.perf_counter()
            grade(warmup, work / "out-warmup", "--scheduler", address)
            figures["cold_start_2_s"] = time.perf_counter() - started
            figures["local_2_s"] = grade(source, work / "out-local-2", "-j", "2")
            figures["cluster_2_s"] = grade(source, work / "out-cluster-2", "--scheduler", address)
            print(f"2 threads: local {figures['local_2_s']:.1f} s, cluster of 2 workers {figures['cluster_2_s']:.1f} s",
                  flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    n = args.count
    figures.update(count=n, cores=os.cpu_count() or 1,
                   scaling=figures["cluster_1_s"] / figures["cluster_2_s"],
                   local_scaling=figures["local_1_s"] / figures["local_2_s"],
                   overhead_1=figures["cluster_1_s"] / figures["local_1_s"] - 1,
                   overhead_2=figures["cluster_2_s"] / figures["local_2_s"] - 1)
    print()
    print(f"{n} submissions of {EXERCISE}, {figures['cores']} cores, `jaxgrade grade --regrade`, wall time:\n")
    print("| configuration | time | submissions/s | vs local at the same parallelism |\n|---|---|---|---|")
    for label, key in (("local -j 1", "local_1"), ("cluster: 1 worker × 1 thread", "cluster_1"),
                       ("local -j 2", "local_2"), ("cluster: 2 workers × 1 thread", "cluster_2")):
        seconds = figures[f"{key}_s"]
        versus = "" if key.startswith("local") else f"{100 * figures['overhead_' + key[-1]]:+.0f}%"
        print(f"| {label} | {seconds:.1f} s | {n / seconds:.2f} | {versus} |")
    print(f"\nscaling 1 → 2 workers: ×{figures['scaling']:.2f} "
          f"(local -j 1 → -j 2: ×{figures['local_scaling']:.2f}); "
          f"first batch of 8 on fresh workers: {figures['cold_start_1_s']:.1f} s (1), "
          f"{figures['cold_start_2_s']:.1f} s (2)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
