"""An instructor's first validation of one exercise, against grading its variants once.

`jaxgrade validate SLUG --fresh` (the reference and every right/ and wrong/ variant under the
five seeds, nothing reused) and `jaxgrade grade` of the same files as a class with two workers
(`-j 2`, one seed), each from an empty cache (a first run: both fill the compilation cache from
the reference, and grade warms it from the variants too), alternated so that machine noise
hits both. Prints the medians and the ratio validate/grade. Goal: at most 1.5.

    .venv/bin/python bench/validate_bench.py [--rounds N] [--exercise SLUG ...]

By default (as `make bench` runs it) three exercises: the seed exercise, the one whose
validation costs most against its grading (data_parallel_train_step: an eager shard_map step
of ~12 s a seed), and the one whose right variants each retrace a scan on every call
(scan_not_loop). `--exercise all` times every exercise of the catalogue.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
JAXGRADE = Path(sys.executable).parent / "jaxgrade"
DEFAULT_EXERCISES = ("named_sharding_replicated", "data_parallel_train_step", "scan_not_loop")


def timed(command: list[str]) -> float:
    """Seconds one run takes, from an empty jaxgrade cache of its own."""
    cache = tempfile.mkdtemp(prefix="jaxgrade-bench-cache-")
    started = time.perf_counter()
    # JAXGRADE_NO_DAEMON: nothing left behind to fill the cache removed below
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800,
                   env={**os.environ, "JAXGRADE_CACHE": cache, "JAXGRADE_NO_DAEMON": "1"})
    elapsed = time.perf_counter() - started
    shutil.rmtree(cache, ignore_errors=True)
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "3")))
    parser.add_argument("--exercise", action="append", metavar="SLUG",
                        help="an exercise to time (repeatable; 'all': every one)")
    args = parser.parse_args()
    slugs = args.exercise or list(DEFAULT_EXERCISES)
    if slugs == ["all"]:
        slugs = sorted(path.parent.name for path in (REPO / "exercises").glob("*/exercise.toml"))
    for slug in slugs:
        compare(slug, args.rounds)
    return 0


def compare(slug: str, rounds: int) -> None:
    """Time validate and grade of ``slug``'s files, alternated ``rounds`` times; print the medians."""
    folder = REPO / "exercises" / slug
    work = Path(tempfile.mkdtemp(prefix="jaxgrade-bench-class-"))
    shutil.copy(folder / "reference.py", work / "reference.py")
    for kind in ("right", "wrong"):
        for variant in sorted((folder / kind).glob("*.py")):
            shutil.copy(variant, work / f"{kind}_{variant.name}")
    count = len(list(work.glob("*.py")))
    validate = [str(JAXGRADE), "validate", slug, "--fresh"]
    grade = [str(JAXGRADE), "grade", str(work), "-e", slug, "-j", "2", "-o", str(work / "out")]
    validations, gradings = [], []
    for _ in range(rounds):
        validations.append(timed(validate))
        gradings.append(timed(grade))
        shutil.rmtree(work / "out", ignore_errors=True)
    v, g = statistics.median(validations), statistics.median(gradings)
    print(f"{slug}: {count} files (reference, right/, wrong/), medians of {rounds}")
    print(f"jaxgrade validate {slug} --fresh (5 seeds): {v:.1f} s   "
          f"(runs: {', '.join(f'{t:.1f}' for t in validations)})")
    print(f"jaxgrade grade -j 2 of the same files (1 seed):   {g:.1f} s   "
          f"(runs: {', '.join(f'{t:.1f}' for t in gradings)})")
    print(f"ratio validate/grade: {v / g:.2f}   (goal: at most 1.5)", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
