"""Batch grading figures: `jaxgrade grade` against the naive baseline, side by side, one run.

    .venv/bin/python bench/batch_bench.py [--repeat 3] [--baseline 20] [--memory-run 1000] [--json FILE]

1. Throughput: 100 submissions made from the exercise's reference and right/ variants (half)
   and its known-wrong variants (half; none of the limits_* ones, which wait out time limits
   by design), each made unique by an appended comment so every sha256 differs. Graded with
   ``jaxgrade grade -j <cores> --regrade`` as a subprocess, ``--repeat`` times; the median
   wall time is quoted (start-up, intake, reports, gradebook and summary included).
2. The naive baseline on the same submissions: one fresh Python process per submission
   running pytest on bench/naive_baseline/test_submission.py, one after another. It is slow,
   so it runs on ``--baseline`` of the 100 (the same half-right mix) and the median time per
   submission is extrapolated to 100; the figures say so. ``--baseline 0`` skips it.
3. Peak memory: proportional set size (PSS, so pages shared by forked children count once)
   summed over the grading process and all its descendants, sampled every 0.5 s (walking
   /proc costs CPU; sampling faster slowed the run it measures).
4. Flat memory: ``--memory-run`` submissions (the same 100 repeated with new comments)
   graded in one run; the PSS of the whole tree and the RSS of the grading process itself
   early in the run are compared with late in the run.
5. ``jaxgrade check`` latency on the reference against a bare ``python -c "import jax; ..."``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent
EXERCISE = "named_sharding_replicated"
BASELINE = REPO / "bench" / "naive_baseline" / "test_submission.py"


def make_class(target: Path, count: int, offset: int = 0) -> list[Path]:
    """``count`` submissions, half right and half wrong, alternating, each unique."""
    from grader.exercise import find_exercise
    exercise = find_exercise(EXERCISE)
    right = [exercise.reference] + [v.path for v in exercise.variants("right")]
    wrong = [v.path for v in exercise.variants("wrong") if v.expect != "limits"]
    target.mkdir(parents=True, exist_ok=True)
    made = []
    for i in range(count):
        pool = right if i % 2 == 0 else wrong
        origin = pool[(i // 2) % len(pool)]
        path = target / f"student{offset + i:04d}.py"
        path.write_text(origin.read_text() + f"\n# submission {offset + i} (from {origin.parent.name}/{origin.name})\n")
        made.append(path)
    return made


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _kib(pid: int, field: str, source: str) -> int:
    try:
        with open(f"/proc/{pid}/{source}") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class MemorySampler:
    """Samples the PSS of a process tree and the RSS of its root every ``interval`` seconds."""

    def __init__(self, pid: int, interval: float = 0.5) -> None:
        self.pid, self.interval = pid, interval
        self.samples: list[tuple[float, int, int]] = []  # (time, tree PSS KiB, root RSS KiB)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        start = time.monotonic()
        while not self._stop.wait(self.interval):
            pss = sum(_kib(p, "Pss", "smaps_rollup") for p in _tree(self.pid))
            rss = _kib(self.pid, "VmRSS", "status")
            if rss:
                self.samples.append((time.monotonic() - start, pss, rss))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_mib(self) -> float:
        return max((s[1] for s in self.samples), default=0) / 1024


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_grade(source: Path, out: Path, jobs: int, sample: bool = False) -> tuple[float, MemorySampler | None, str]:
    """Wall time of one ``jaxgrade grade``; ``last_cpu`` holds its CPU seconds (the grading
    process, the zygote and every child: each is reaped by its parent, so all are counted)."""
    command = [str(BIN / "jaxgrade"), "grade", str(source), "-e", EXERCISE, "-o", str(out), "-j", str(jobs),
               "--regrade"]
    started, cpu = time.monotonic(), _children_cpu()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    sampler = MemorySampler(process.pid) if sample else None
    stdout, _ = process.communicate()
    elapsed = time.monotonic() - started
    run_grade.last_cpu = _children_cpu() - cpu  # type: ignore[attr-defined]
    if sampler:
        sampler.stop()
    if process.returncode != 0:
        raise SystemExit(f"jaxgrade grade failed ({process.returncode}):\n{stdout}")
    return elapsed, sampler, stdout


def run_baseline(paths: list[Path]) -> list[float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX", "XLA"))}
    env.update(JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES="8")
    times = []
    cpu = _children_cpu()
    for path in paths:
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(BASELINE)],
                       env={**env, "SUBMISSION": str(path)}, cwd=REPO, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        times.append(time.monotonic() - started)
    run_baseline.last_cpu = (_children_cpu() - cpu) / len(paths)  # type: ignore[attr-defined]
    return times


def check_latency(repeat: int) -> tuple[float, float]:
    reference = REPO / "exercises" / EXERCISE / "reference.py"
    bare = [sys.executable, "-c", "import jax, jax.numpy as jnp; jnp.sum(jnp.ones(3)).block_until_ready()"]
    check = [str(BIN / "jaxgrade"), "check", str(reference), "-e", EXERCISE]

    def median_time(command: list[str]) -> float:
        times = []
        for _ in range(repeat):
            started = time.monotonic()
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times.append(time.monotonic() - started)
        return statistics.median(times)

    subprocess.run(check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fills the compilation cache
    return median_time(check), median_time(bare)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3, help="jaxgrade runs over the same submissions (median)")
    parser.add_argument("--baseline", type=int, default=20, help="submissions the naive baseline grades")
    parser.add_argument("--memory-run", type=int, default=1000, help="submissions in the flat-memory run (0: skip)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="jaxgrade-bench-"))
    figures: dict[str, object] = {"cores": os.cpu_count(), "jobs": args.jobs, "submissions": args.count}
    try:
        paths = make_class(work / "class", args.count)
        make_class(work / "warmup", 4, offset=10_000)
        run_grade(work / "warmup", work / "warmup-out", args.jobs)  # fills the compilation cache once
        runs = []
        for i in range(args.repeat):
            elapsed, sampler, _ = run_grade(work / "class", work / f"out{i}", args.jobs, sample=True)
            runs.append((elapsed, sampler.peak_mib if sampler else 0.0, run_grade.last_cpu / args.count))
            print(f"jaxgrade grade run {i + 1}: {args.count} in {elapsed:.2f} s = {args.count / elapsed:.2f}/s, "
                  f"peak PSS {runs[-1][1]:.0f} MiB", flush=True)
        seconds = statistics.median(r[0] for r in runs)
        figures.update(jaxgrade_s=seconds, jaxgrade_per_s=args.count / seconds,
                       peak_pss_mib=statistics.median(r[1] for r in runs),
                       jaxgrade_cpu_per_submission_s=statistics.median(r[2] for r in runs),
                       load_average=os.getloadavg()[0])

        if args.baseline:
            subset = paths[:args.baseline]
            per = statistics.median(run_baseline(subset))
            figures.update(baseline_subset=len(subset), baseline_median_s=per, baseline_extrapolated_s=per * args.count,
                           baseline_per_s=1 / per, speedup=per * args.count / seconds,
                           baseline_cpu_per_submission_s=run_baseline.last_cpu)
            print(f"naive baseline: median {per:.2f} s per submission over {len(subset)} "
                  f"-> {per * args.count:.0f} s for {args.count} (extrapolated)", flush=True)

        if args.memory_run:
            for block in range(0, args.memory_run, args.count):
                make_class(work / "big", min(args.count, args.memory_run - block), offset=block)
            elapsed, sampler, _ = run_grade(work / "big", work / "big-out", args.jobs, sample=True)
            assert sampler is not None
            samples = sampler.samples
            tenth = max(len(samples) // 10, 1)
            early, late = samples[tenth:2 * tenth], samples[-tenth:]  # skip the start-up ramp
            figures.update(memory_run=args.memory_run, memory_run_s=elapsed, memory_run_per_s=args.memory_run / elapsed,
                           memory_peak_pss_mib=sampler.peak_mib,
                           pss_early_mib=statistics.median(s[1] for s in early) / 1024,
                           pss_late_mib=statistics.median(s[1] for s in late) / 1024,
                           grader_rss_early_mib=statistics.median(s[2] for s in early) / 1024,
                           grader_rss_late_mib=statistics.median(s[2] for s in late) / 1024)
            print(f"{args.memory_run} submissions in {elapsed:.1f} s ({args.memory_run / elapsed:.2f}/s); tree PSS "
                  f"early {figures['pss_early_mib']:.0f} MiB, late {figures['pss_late_mib']:.0f} MiB, "
                  f"peak {sampler.peak_mib:.0f} MiB; grading process RSS early {figures['grader_rss_early_mib']:.0f} "
                  f"MiB, late {figures['grader_rss_late_mib']:.0f} MiB", flush=True)

        check_s, bare_s = check_latency(5)
        figures.update(check_s=check_s, bare_jax_s=bare_s, check_ratio=check_s / bare_s)
        print(f"jaxgrade check on the reference: median {check_s:.2f} s; bare python -c 'import jax; ...': "
              f"{bare_s:.2f} s; ratio {check_s / bare_s:.2f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print()
    print("| figure | value |\n|---|---|")
    print(f"| jaxgrade grade, {args.count} submissions, -j {args.jobs} (median of {args.repeat}) | "
          f"{figures['jaxgrade_s']:.1f} s = **{figures['jaxgrade_per_s']:.1f} submissions/s** |")
    if args.baseline:
        print(f"| naive baseline (pytest, fresh process each; {figures['baseline_subset']} run, extrapolated) | "
              f"{figures['baseline_extrapolated_s']:.0f} s = {figures['baseline_per_s']:.2f} submissions/s |")
        print(f"| speed-up | **{figures['speedup']:.1f}×** |")
        print(f"| CPU seconds per submission: jaxgrade (whole run / {args.count}) vs baseline | "
              f"{figures['jaxgrade_cpu_per_submission_s']:.2f} s vs {figures['baseline_cpu_per_submission_s']:.2f} s |")
    else:
        print(f"| CPU seconds per submission (whole run / {args.count}) | "
              f"{figures['jaxgrade_cpu_per_submission_s']:.2f} s |")
    print(f"| load average during the run (other work on the machine) | {figures['load_average']:.1f} |")
    print(f"| peak memory (PSS of the whole tree, 100 submissions) | {figures['peak_pss_mib']:.0f} MiB |")
    if args.memory_run:
        print(f"| {args.memory_run} submissions: time, peak PSS | {figures['memory_run_s']:.0f} s, "
              f"{figures['memory_peak_pss_mib']:.0f} MiB |")
        print(f"| {args.memory_run} submissions: tree PSS early → late | {figures['pss_early_mib']:.0f} → "
              f"{figures['pss_late_mib']:.0f} MiB |")
        print(f"| {args.memory_run} submissions: grading process RSS early → late | "
              f"{figures['grader_rss_early_mib']:.0f} → {figures['grader_rss_late_mib']:.0f} MiB |")
    print(f"| jaxgrade check (reference) vs bare import jax | {figures['check_s']:.2f} s vs {figures['bare_jax_s']:.2f} s "
          f"= {figures['check_ratio']:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
