"""Batch grading figures: `jaxgrade grade` against the naive baseline, side by side, one run.

    .venv/bin/python bench/batch_bench.py [--repeat 3] [--baseline 20] [--memory-run 1000] [--json FILE]
                                          [--before DIR]

Two classes of ``--count`` submissions each, graded in turn (today's, then the realistic one,
``--repeat`` times, so a burst of load hits both):

- **today's class**: the exercise's reference and right/ variants (half) and its known-wrong
  variants (half; none of the limits_* ones, which wait out time limits by design);
- **the realistic class** (bench/realistic_class/, written independently of the exercise's
  variants): mostly wrong, as a real class is. 70% are its wrong submissions (every category:
  load, type, value, structure, limits), 30% correct: each slow-but-legal one (``slow_*``) once,
  the rest the reference and right/ variants. Its two submissions that wait out a time limit by
  design (``limits_timeout_*``) are graded once on their own and reported apart.

Every submission is made unique by an appended comment so every sha256 differs.

1. Throughput: each class graded with ``jaxgrade grade -j <cores> --regrade`` as a subprocess
   (start-up, intake, reports, gradebook and summary included); the median wall time is quoted.
   Each grader gets a fresh compilation cache (``$JAXGRADE_CACHE``), filled by a small warm-up
   run before anything is timed (its time is reported: a one-off per exercise version). Every
   timed run starts from the cache as the warm-up left it (a copy, put back before each run):
   a class is graded once, so a grader whose children write the cache (the code before #24)
   must not find in it the programs the same class compiled in an earlier repeat.
2. Per category (the category a submission's ``# expect:`` line names; ``right`` for the
   reference and right/ variants, ``slow`` for the slow-but-legal ones): the median of the
   reports' ``duration_s`` (the wall time of one grading in its worker) over every run, and
   the ratio of the failing submissions' median to the passing ones'.
3. The naive baseline on the same submissions: one fresh Python process per submission
   running pytest on bench/naive_baseline/test_submission.py, one after another. It is slow,
   so it runs on ``--baseline`` of each class (their first ones: the same mix) and the median
   time per submission is extrapolated to the class; the figures say so. ``--baseline 0`` skips it.
4. Peak memory: proportional set size (PSS, so pages shared by forked children count once)
   summed over the grading process and all its descendants, sampled every 0.5 s (walking
   /proc costs CPU; sampling faster slowed the run it measures).
5. Flat memory: ``--memory-run`` submissions of today's class (the same 100 repeated with new
   comments) graded in one run; the PSS of the whole tree and the RSS of the grading process
   itself early in the run are compared with late in the run.
6. ``jaxgrade check`` latency on the reference against a bare ``python -c "import jax; ..."``.

``--before DIR``: DIR holds another checkout of jaxgrade (``git archive COMMIT | tar -x -C DIR``);
its grader grades both classes too, interleaved with this one (each class: this grader, then
DIR's, in the other order on every second repeat), with its own fresh cache, so before/after figures come from the same run and load.
It runs in this virtual environment with ``PYTHONPATH=DIR``.
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
REALISTIC = REPO / "bench" / "realistic_class"
CLASSES = ("today", "realistic")
WRONG_SHARE = 0.7  # of the realistic class


def _exercise():  # type: ignore[no-untyped-def]
    from grader.authoring.exercise import find_exercise
    return find_exercise(EXERCISE)


def _write(target: Path, index: int, origin: Path, origin_name: str) -> Path:
    path = target / f"student{index:04d}.py"
    path.write_text(origin.read_text() + f"\n# submission {index} (from {origin_name})\n")
    return path


def make_class(target: Path, count: int, offset: int = 0) -> list[Path]:
    """Today's class: ``count`` submissions, half right and half wrong, alternating, each unique."""
    return list(make_class_with_categories(target, count, offset))


def make_class_with_categories(target: Path, count: int, offset: int = 0) -> dict[Path, str]:
    """Today's class, each submission with its category (``right`` or the wrong variant's)."""
    exercise = _exercise()
    right = [(exercise.reference, "right")] + [(v.path, "right") for v in exercise.variants("right")]
    wrong = [(v.path, v.expect) for v in exercise.variants("wrong") if v.expect != "limits"]
    target.mkdir(parents=True, exist_ok=True)
    made = {}
    for i in range(count):
        pool = right if i % 2 == 0 else wrong
        origin, category = pool[(i // 2) % len(pool)]
        made[_write(target, offset + i, origin, f"{origin.parent.name}/{origin.name}")] = category
    return made


def realistic_category(path: Path) -> str:
    """A realistic submission's category: its ``# expect:`` line, ``slow`` for the slow-but-legal ones."""
    from grader.authoring.exercise import EXPECT
    match = EXPECT.search(path.read_text())
    return match.group(1) if match else "slow"


def make_realistic_class(target: Path, count: int) -> dict[Path, str]:
    """The realistic class: 70% wrong (every wrong submission of bench/realistic_class at least
    once when ``count`` allows, then again in turn), 30% right (each slow-but-legal one once,
    the rest the reference and right/ variants in turn), in a fixed shuffled order so any
    prefix (the naive baseline's subset) holds the same mix."""
    import random
    exercise = _exercise()
    written = [p for p in sorted(REALISTIC.glob("*.py")) if not p.stem.startswith("limits_timeout_")]
    wrong = [(p, realistic_category(p)) for p in written if realistic_category(p) != "slow"]
    slow = [(p, "slow") for p in written if realistic_category(p) == "slow"]
    right = [(exercise.reference, "right")] + [(v.path, "right") for v in exercise.variants("right")]
    wrong_count = round(count * WRONG_SHARE)
    chosen = [wrong[i % len(wrong)] for i in range(wrong_count)]
    rest = count - wrong_count
    chosen += slow[:rest] + [right[i % len(right)] for i in range(max(rest - len(slow), 0))]
    order = list(range(len(chosen)))
    random.Random(15).shuffle(order)
    target.mkdir(parents=True, exist_ok=True)
    made = {}
    for index, pick in enumerate(order):
        origin, category = chosen[pick]
        made[_write(target, index, origin, f"{origin.parent.name}/{origin.name}")] = category
    return made


def make_timeouts(target: Path) -> dict[Path, str]:
    """The realistic submissions that wait out a time limit by design, on their own."""
    target.mkdir(parents=True, exist_ok=True)
    return {_write(target, i, p, f"realistic_class/{p.name}"): "limits (time-out)"
            for i, p in enumerate(sorted(REALISTIC.glob("limits_timeout_*.py")))}


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


def run_grade(source: Path, out: Path, jobs: int, sample: bool = False, env: dict[str, str] | None = None
              ) -> tuple[float, MemorySampler | None, str]:
    """Wall time of one ``jaxgrade grade``; ``last_cpu`` holds its CPU seconds (the grading
    process, the zygote and every child: each is reaped by its parent, so all are counted)."""
    command = [str(BIN / "jaxgrade"), "grade", str(source), "-e", EXERCISE, "-o", str(out), "-j", str(jobs),
               "--regrade"]
    started, cpu = time.monotonic(), _children_cpu()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    sampler = MemorySampler(process.pid) if sample else None
    stdout, _ = process.communicate()
    elapsed = time.monotonic() - started
    run_grade.last_cpu = _children_cpu() - cpu  # type: ignore[attr-defined]
    if sampler:
        sampler.stop()
    if process.returncode != 0:  # the gradebook holds why (its grader_error rows); the bench deletes it
        book = out / "gradebook.csv"
        why = [line for line in book.read_text().splitlines() if "grader failed" in line] if book.exists() else []
        raise SystemExit(f"jaxgrade grade failed ({process.returncode}):\n{stdout}" + "\n".join(why))
    return elapsed, sampler, stdout


def graded(out: Path, categories: dict[Path, str]) -> list[tuple[str, float, str]]:
    """(category, the report's duration_s, its status) of every submission graded into ``out``."""
    found = []
    for path, category in categories.items():
        record = json.loads((out / "students" / path.stem / "result.json").read_text())
        found.append((category, float(record["report"]["duration_s"]), record["report"]["status"]))
    return found


def run_baseline(paths: list[Path]) -> list[float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX", "XLA"))}
    env.update(JAX_PLATFORMS="cpu", JAX_NUM_CPU_DEVICES="8")
    times = []
    cpu = _children_cpu()
    for path in paths:
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(BASELINE)],
                       env={**env, "SUBMISSION": str(path)}, cwd=REPO, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=600)
        times.append(time.monotonic() - started)
    run_baseline.last_cpu = (_children_cpu() - cpu) / len(paths)  # type: ignore[attr-defined]
    return times


def check_latency(repeat: int) -> tuple[float, float]:
    reference = REPO / "exercises" / EXERCISE / "reference.py"
    bare = [sys.executable, "-c", "import jax, jax.numpy as jnp; jnp.sum(jnp.ones(3)).block_until_ready()"]
    check = [str(BIN / "jaxgrade"), "check", str(reference), "-e", EXERCISE, "--no-daemon"]  # in-process

    def median_time(command: list[str]) -> float:
        times = []
        for _ in range(repeat):
            started = time.monotonic()
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times.append(time.monotonic() - started)
        return statistics.median(times)

    subprocess.run(check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fills the compilation cache
    return median_time(check), median_time(bare)


def category_table(rows: list[tuple[str, float, str]]) -> dict[str, tuple[float, int]]:
    """Per category: the median duration_s and how many gradings it is over; ``passing`` (full
    marks) and ``failing`` over every category; ``failing / passing`` the ratio of the two."""
    table: dict[str, tuple[float, int]] = {}
    groups: dict[str, list[float]] = {}
    for category, seconds, status in rows:
        groups.setdefault(category, []).append(seconds)
        groups.setdefault("passing" if status == "passed" else "failing", []).append(seconds)
    for category, values in groups.items():
        table[category] = (statistics.median(values), len(values))
    if "passing" in table and "failing" in table:
        table["failing / passing"] = (table["failing"][0] / table["passing"][0], 0)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3, help="jaxgrade runs over the same submissions (median)")
    parser.add_argument("--baseline", type=int, default=20, help="submissions of each class the naive baseline grades")
    parser.add_argument("--memory-run", type=int, default=1000, help="submissions in the flat-memory run (0: skip)")
    parser.add_argument("--before", type=Path, help="a checkout of an earlier jaxgrade, graded side by side")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="jaxgrade-bench-"))
    # JAXGRADE_NO_DAEMON: no variants graded in the background after a run, beside the next one
    graders = {"jaxgrade": {**os.environ, "JAXGRADE_CACHE": str(work / "cache-jaxgrade"), "JAXGRADE_NO_DAEMON": "1"}}
    if args.before:
        graders["before"] = {**os.environ, "JAXGRADE_CACHE": str(work / "cache-before"), "JAXGRADE_NO_DAEMON": "1",
                             "PYTHONPATH": str(args.before.resolve())}
    figures: dict[str, object] = {"cores": os.cpu_count(), "jobs": args.jobs, "submissions": args.count}
    try:
        classes = {"today": make_class_with_categories(work / "today", args.count),
                   "realistic": make_realistic_class(work / "realistic", args.count)}
        timeouts = make_timeouts(work / "timeouts")
        make_class(work / "warmup", 4, offset=10_000)
        for name, env in graders.items():  # fills each grader's compilation cache once, as its first class run would
            warmup_s, _, _ = run_grade(work / "warmup", work / f"warmup-out-{name}", args.jobs, env=env)
            figures[f"{name}_warmup_s"] = warmup_s
            print(f"{name}: warm-up (fills the compilation cache, once per exercise version): {warmup_s:.1f} s",
                  flush=True)
            shutil.copytree(env["JAXGRADE_CACHE"], work / f"warm-cache-{name}", symlinks=True)

        def from_warm_cache(name: str, env: dict[str, str]) -> None:
            shutil.rmtree(env["JAXGRADE_CACHE"])
            shutil.copytree(work / f"warm-cache-{name}", env["JAXGRADE_CACHE"], symlinks=True)
        runs: dict[tuple[str, str], list[tuple[float, float, float, float]]] = {}
        rows: dict[tuple[str, str], list[tuple[str, float, str]]] = {}
        for i in range(args.repeat):
            for class_name, categories in classes.items():
                # who goes first alternates: a run just after another is a few percent slower here
                order = list(graders.items())[::-1 if i % 2 else 1]
                for name, env in order:
                    from_warm_cache(name, env)
                    out = work / f"out-{name}-{class_name}-{i}"
                    elapsed, sampler, _ = run_grade(work / class_name, out, args.jobs, sample=True, env=env)
                    runs.setdefault((name, class_name), []).append(
                        (elapsed, sampler.peak_mib if sampler else 0.0, run_grade.last_cpu / args.count,
                         os.getloadavg()[0]))
                    rows.setdefault((name, class_name), []).extend(graded(out, categories))
                    shutil.rmtree(out, ignore_errors=True)
                    print(f"{name}, {class_name} class, run {i + 1}: {args.count} in {elapsed:.2f} s = "
                          f"{args.count / elapsed:.2f}/s, peak PSS {runs[(name, class_name)][-1][1]:.0f} MiB, "
                          f"load {os.getloadavg()[0]:.1f}", flush=True)
        for (name, class_name), measured in runs.items():
            seconds = statistics.median(r[0] for r in measured)
            figures[f"{name}_{class_name}"] = {
                "seconds": seconds, "per_s": args.count / seconds,
                "peak_pss_mib": statistics.median(r[1] for r in measured),
                "cpu_per_submission_s": statistics.median(r[2] for r in measured),
                "load_average": statistics.median(r[3] for r in measured),
                "categories": category_table(rows[(name, class_name)])}
        for name, env in graders.items():
            out = work / f"out-{name}-timeouts"
            elapsed, _, _ = run_grade(work / "timeouts", out, args.jobs, env=env)
            figures[f"{name}_timeouts"] = {category: seconds for category, seconds, _ in graded(out, timeouts)} | {
                "each_s": [seconds for _, seconds, _ in graded(out, timeouts)]}
            print(f"{name}: the {len(timeouts)} time-out submissions: "
                  f"{', '.join(f'{s:.1f} s' for _, s, _ in graded(out, timeouts))}", flush=True)

        if args.baseline:
            for class_name, categories in classes.items():
                subset = list(categories)[:args.baseline]
                per = statistics.median(run_baseline(subset))
                seconds = figures[f"jaxgrade_{class_name}"]["seconds"]  # type: ignore[index]
                figures[f"baseline_{class_name}"] = {
                    "subset": len(subset), "median_s": per, "extrapolated_s": per * args.count, "per_s": 1 / per,
                    "speedup": per * args.count / seconds, "cpu_per_submission_s": run_baseline.last_cpu,
                    "load_average": os.getloadavg()[0]}
                print(f"naive baseline, {class_name} class: median {per:.2f} s per submission over {len(subset)} "
                      f"-> {per * args.count:.0f} s for {args.count} (extrapolated)", flush=True)

        if args.memory_run:
            for block in range(0, args.memory_run, args.count):
                make_class(work / "big", min(args.count, args.memory_run - block), offset=block)
            elapsed, sampler, _ = run_grade(work / "big", work / "big-out", args.jobs, sample=True,
                                            env=graders["jaxgrade"])
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
    print_tables(args, figures, list(graders))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


def print_tables(args: argparse.Namespace, figures: dict[str, object], graders: list[str]) -> None:
    columns = [(name, class_name) for class_name in CLASSES for name in graders]
    heads = " | ".join(f"{class_name} class{'' if name == 'jaxgrade' else f' ({name})'}" for name, class_name in columns)
    print(f"\n| figure | {heads} |\n|---|{'---|' * len(columns)}")

    def row(label: str, cell) -> None:  # type: ignore[no-untyped-def]
        print(f"| {label} | {' | '.join(cell(figures[f'{n}_{c}'], n, c) for n, c in columns)} |")

    row(f"jaxgrade grade, {args.count} submissions, -j {args.jobs} (median of {args.repeat})",
        lambda f, n, c: f"{f['seconds']:.1f} s = **{f['per_s']:.1f}/s**")
    if args.baseline:
        row("naive baseline (pytest, fresh process each; extrapolated from the first "
            f"{args.baseline})", lambda f, n, c: f"{figures[f'baseline_{c}']['extrapolated_s']:.0f} s = "  # type: ignore[index]
                                                 f"{figures[f'baseline_{c}']['per_s']:.2f}/s")  # type: ignore[index]
        row("speed-up over the naive baseline", lambda f, n, c: f"**{figures[f'baseline_{c}']['per_s'] and f['per_s'] / figures[f'baseline_{c}']['per_s']:.1f}×**")  # type: ignore[index]
    row("CPU seconds per submission (whole process tree)", lambda f, n, c: f"{f['cpu_per_submission_s']:.2f} s")
    row("peak memory (PSS of the whole tree)", lambda f, n, c: f"{f['peak_pss_mib']:.0f} MiB")
    row("load average during the runs (median)", lambda f, n, c: f"{f['load_average']:.1f}")
    categories = ["passing", "failing", "failing / passing", "right", "slow", "load", "type", "value", "structure",
                  "limits"]
    for category in categories:
        def cell(f, n, c, category=category):  # type: ignore[no-untyped-def]
            value = f["categories"].get(category)
            if value is None:
                return "–"
            return f"{value[0]:.2f}×" if category == "failing / passing" else f"{value[0]:.2f} s ({value[1]})"
        label = ("median duration_s, " + category + (" (gradings)" if category != "failing / passing" else "")
                 if category != "failing / passing" else "failing / passing (medians)")
        row(label, cell)
    for name in graders:
        timeouts = figures[f"{name}_timeouts"]
        print(f"| time-out submissions ({name}), each | "
              f"{', '.join(f'{s:.1f} s' for s in timeouts['each_s'])} (the limits: 5 s a call, 2 time-outs at most) |")  # type: ignore[index]
        print(f"| warm-up run ({name}: 4 submissions, fills the cache once per exercise version) | "
              f"{figures[f'{name}_warmup_s']:.1f} s |")
    if args.baseline:
        for class_name in CLASSES:
            base = figures[f"baseline_{class_name}"]
            print(f"| naive baseline, {class_name} class: CPU s per submission | {base['cpu_per_submission_s']:.2f} s |")  # type: ignore[index]
    if args.memory_run:
        print(f"| {args.memory_run} submissions of today's class: time, peak PSS | {figures['memory_run_s']:.0f} s, "
              f"{figures['memory_peak_pss_mib']:.0f} MiB |")
        print(f"| {args.memory_run} submissions: tree PSS early → late | {figures['pss_early_mib']:.0f} → "
              f"{figures['pss_late_mib']:.0f} MiB |")
        print(f"| {args.memory_run} submissions: grading process RSS early → late | "
              f"{figures['grader_rss_early_mib']:.0f} → {figures['grader_rss_late_mib']:.0f} MiB |")
    print(f"| jaxgrade check (reference) vs bare import jax | {figures['check_s']:.2f} s vs {figures['bare_jax_s']:.2f} s "
          f"= {figures['check_ratio']:.2f} |")


if __name__ == "__main__":
    main()
