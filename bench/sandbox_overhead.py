"""What the hardened sandbox costs per submission, against the foundation's plain child.

Grades the seed exercise's reference solution alternately with the hardened sandbox
(``Limits(confine=True)``: dedicated uid, namespaces, in-child limits, uid-wide cleanup) and
with the plain child (``Limits(confine=False)``), in the same run and the same process, and
prints the median wall time per submission of each and their ratio, and the median CPU time
of the whole process tree per submission (the grader and its child: what the hardened sandbox
costs in work, which load on a shared machine disturbs far less than wall time). Alternating
the two spreads machine noise evenly over both. Goal: under 10% added.

    .venv/bin/python bench/sandbox_overhead.py [--rounds N] [--exercise SLUG] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.engine import grade  # noqa: E402
from grader.authoring.exercise import find_exercise  # noqa: E402
from grader.sandbox.limits import Limits  # noqa: E402
from grader.sandbox.process import ChildProcess  # noqa: E402


def measure(rounds: int, slug: str) -> dict[str, float]:
    exercise = find_exercise(slug)
    cache = tempfile.mkdtemp(prefix="jaxgrade-bench-cache-")
    os.environ["JAXGRADE_CACHE"] = cache
    hardened, plain = Limits(**{**exercise.limits.__dict__, "confine": True}), \
        Limits(**{**exercise.limits.__dict__, "confine": False})
    for limits in (hardened, plain):  # warm-up: fills the compilation cache, loads every module
        report = grade(exercise, exercise.reference, limits=limits)
        if report.status != "passed":
            raise SystemExit(f"the reference did not pass with confine={limits.confine}: {report.status}")
    times: dict[bool, list[float]] = {True: [], False: []}
    cpu: dict[bool, list[float]] = {True: [], False: []}
    for round_number in range(rounds):
        order = (hardened, plain) if round_number % 2 == 0 else (plain, hardened)
        for limits in order:
            started, used = time.perf_counter(), tree_cpu_s()
            report = grade(exercise, exercise.reference, limits=limits)
            times[limits.confine].append(time.perf_counter() - started)
            cpu[limits.confine].append(tree_cpu_s() - used)  # the child was waited for: it is counted
            assert report.status == "passed"
    confined, bare = statistics.median(times[True]), statistics.median(times[False])
    confined_cpu, bare_cpu = statistics.median(cpu[True]), statistics.median(cpu[False])
    lifetimes = child_lifetimes(rounds, exercise.devices, hardened, plain)
    forked = forked_lifetimes(4 * rounds, exercise.devices, hardened, plain)
    return {"rounds": rounds, "hardened_median_s": confined, "plain_median_s": bare,
            "ratio": confined / bare, "added_percent": 100 * (confined / bare - 1),
            "hardened_cpu_median_s": confined_cpu, "plain_cpu_median_s": bare_cpu,
            "cpu_added_percent": 100 * (confined_cpu / bare_cpu - 1),
            "child_hardened_median_s": lifetimes[True], "child_plain_median_s": lifetimes[False],
            "forked_child_hardened_median_s": forked[True], "forked_child_plain_median_s": forked[False],
            "root": os.geteuid() == 0}


def tree_cpu_s() -> float:
    """CPU seconds of this process and of every child it has waited for (theirs included)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def child_lifetimes(rounds: int, devices: int, hardened: Limits, plain: Limits,
                    launcher: Any = None) -> dict[bool, float]:
    """The fixed cost alone: start a child, wait until it is ready (JAX imported, confined,
    backend started), close it (with every process of its uid)."""
    times: dict[bool, list[float]] = {True: [], False: []}
    for round_number in range(rounds):
        for limits in (hardened, plain) if round_number % 2 == 0 else (plain, hardened):
            started = time.perf_counter()
            with ChildProcess(devices, limits, launcher=launcher) as child:
                child.ready
            times[limits.confine].append(time.perf_counter() - started)
    return {k: statistics.median(v) for k, v in times.items()}


def forked_lifetimes(rounds: int, devices: int, hardened: Limits, plain: Limits) -> dict[bool, float]:
    """The same for children forked from a warm worker (grader.sandbox.pool), where the fixed cost
    is small and the sandbox's share of it large."""
    from grader.sandbox.pool import Pool
    pool = Pool()
    try:
        child_lifetimes(2, devices, hardened, plain, pool.launch)  # starts the zygote
        return child_lifetimes(rounds, devices, hardened, plain, pool.launch)
    finally:
        pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--exercise", default="named_sharding_replicated")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args()
    result = measure(args.rounds, args.exercise)
    if args.json:
        print(json.dumps(result))
        return
    print(f"sandbox overhead ({args.rounds} rounds, reference of {args.exercise}, "
          f"{'root: dedicated uid' if result['root'] else 'not root'}):")
    print(f"  hardened sandbox  {result['hardened_median_s']:.3f} s per submission (median)")
    print(f"  plain child       {result['plain_median_s']:.3f} s per submission (median)")
    print(f"  ratio             {result['ratio']:.3f} ({result['added_percent']:+.1f}%; goal: under +10%)")
    print(f"  CPU of the whole process tree per submission: hardened {result['hardened_cpu_median_s']:.3f} s, "
          f"plain {result['plain_cpu_median_s']:.3f} s ({result['cpu_added_percent']:+.1f}%)")
    print(f"  one exec'd child, start to close: hardened {result['child_hardened_median_s']:.3f} s, "
          f"plain {result['child_plain_median_s']:.3f} s")
    print(f"  one forked child (warm worker), start to close: hardened "
          f"{result['forked_child_hardened_median_s']:.4f} s, plain {result['forked_child_plain_median_s']:.4f} s")


if __name__ == "__main__":
    main()
