"""jaxgrade against Otter-Grader 7.0, side by side on the same class (#43).

    .venv/bin/python bench/otter_bench.py [--class DIR] [--repeat 3] [--json FILE]
    make bench-otter

Issue #43 asks that every class run, the cold first run included, be at least 25x as fast as
Otter-Grader's on the same class, and one submission at least 5x; its reporter ran ``jaxgrade
grade -j 2`` against ``otter run`` two at a time on this machine. This script repeats that
measurement where anyone can run it. It is not part of ``make bench`` and CI never runs it: it
installs Otter, which jaxgrade never depends on, into a venv of its own (``.venv-otter``, made
on first use: ``otter-grader[grading]==7.0.0``, whose ``grading`` extra brings the Jupyter
kernel ``otter run`` executes a submission in, and JAX at constraints.txt's version).

Otter's side is what a diligent Otter user writes for the seed exercise: OK-format tests in
bench/otter/tests (the values on a few vectors, the empty and a negative one among them; the
type: a float32 JAX scalar of shape (); the sharding of the returned value: a NamedSharding
whose mesh is ``jax.devices()[:1]`` with the one axis 'data', fully replicated; every call with
the student's prints swallowed, which a doctest would otherwise take for the test's output and
fail right solutions that print), built into an autograder with ``otter generate`` (once per
run of this script, untimed). Every submission is graded with ``otter run`` (non-containerized),
which takes a ``.py`` as it is (one code cell, run in a Jupyter kernel of its own), with 8
simulated CPU devices as jaxgrade grades (so ``jax.devices()`` and ``jax.devices()[:1]`` differ).

The class (``--class DIR``: any folder or .zip ``jaxgrade grade`` accepts; each grader gets the
file jaxgrade's intake picks per student) is by default 33 student folders made from
exercises/named_sharding_replicated: the reference, every right/ variant, and wrong/ variants
(spread over its categories, none of the limits_* ones, which wait out time limits by design)
up to 33, each with a comment appended so every sha256 differs.

Each repeat times, in turn (who goes first alternates between repeats):

- Otter, class: every submission through ``otter run``, two at a time, the total wall time;
- jaxgrade, cold class: ``jaxgrade grade CLASS -e named_sharding_replicated -j 2`` with a new
  empty ``JAXGRADE_CACHE`` and a new output folder (nothing from an earlier run);
- jaxgrade, warm class: once the variants a small class's cold run leaves to the background are
  graded (grader.batch.warming; how long that took is printed too), the same again with that
  cache, ``--regrade``, into the cold run's output folder (as an instructor's rerun after a fix
  to the exercise: the last run's durations there set the order);
- one submission (a copy of the reference), alone: ``otter run``; ``jaxgrade check`` in-process
  (``JAXGRADE_NO_DAEMON=1``) with a new empty cache (a first check ever) and again with the
  cache it filled; and ``jaxgrade check`` served by the warm grading service (started by a
  check in a runtime folder of this run's own, the check timed once the service is ready).

Every run checks that both graders graded every submission (jaxgrade's gradebook and Otter's
results.json, one per student; where Otter's autograder failed on one, its results.json says
so and the count is printed) and that Otter gives the reference full marks. Prints each run,
then the medians, the ratios Otter / jaxgrade, and the load average at the start and the end;
``--json FILE`` also writes the figures. About 10 minutes with the defaults on 2 cores.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from warm_bench import stop as stop_services  # bench/warm_bench.py, beside this script

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent
EXERCISE = "named_sharding_replicated"
FUNCTION = "replicated_sharding_value"
SEED = REPO / "exercises" / EXERCISE
OTTER_TESTS = REPO / "bench" / "otter"
OTTER_VENV = REPO / ".venv-otter"
OTTER = OTTER_VENV / "bin" / "otter"
OTTER_VERSION = "7.0.0"
CLASS_SIZE = 33
JOBS = 2  # jaxgrade's -j and Otter's concurrent `otter run`s, as the reporter ran them
# What every grader is run under: this environment without jaxgrade's switches (a CI job's CI
# turns the warm service off); Otter's kernel also gets jaxgrade's 8 simulated CPU devices.
BASE_ENV = {k: v for k, v in os.environ.items() if not k.startswith("JAXGRADE_") and k != "CI"} | {"NO_COLOR": "1"}
OTTER_ENV = BASE_ENV | {"JAX_PLATFORMS": "cpu", "JAX_NUM_CPU_DEVICES": "8"}
Step = Callable[[], None]
TIMINGS = ("otter_class", "jaxgrade_cold_class", "jaxgrade_background_fill", "jaxgrade_warm_class",
           "otter_one", "check_first", "check_in_process", "check_warm")


def install_otter() -> None:
    """Makes .venv-otter with Otter at OTTER_VERSION, again when constraints.txt changes (the
    two sides must import the same JAX, NumPy and ml_dtypes); a stamp says it is complete."""
    stamp = OTTER_VENV / ".installed"
    if stamp.exists() and stamp.stat().st_mtime >= (REPO / "constraints.txt").stat().st_mtime:
        return
    print(f"installing Otter-Grader {OTTER_VERSION} into {OTTER_VENV.name} (once) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(OTTER_VENV)], check=True)
    subprocess.run([str(OTTER_VENV / "bin" / "pip"), "install", "--quiet", "-c", str(REPO / "constraints.txt"),
                    f"otter-grader[grading]=={OTTER_VERSION}", "jax"], check=True)
    stamp.touch()


def build_autograder(target: Path) -> Path:
    """Otter's autograder zip, made by ``otter generate`` from bench/otter (its tests, requirements)."""
    autograder = target / "autograder.zip"
    subprocess.run([str(OTTER), "generate", "-o", str(autograder)], cwd=OTTER_TESTS, env=OTTER_ENV, check=True,
                   stdout=subprocess.DEVNULL)
    return autograder


def spread(items: list[Path], count: int) -> list[Path]:
    """``count`` of ``items`` evenly spaced over the list (all of them when there are no more)."""
    if count >= len(items):
        return items
    return [items[i * len(items) // count] for i in range(count)]


def make_class(target: Path) -> None:
    """The default class: CLASS_SIZE student folders, the reference, every right/ variant, then
    wrong/ ones (no limits_*) to fill it, each with a comment appended (every sha256 differs)."""
    right = [SEED / "reference.py", *sorted((SEED / "right").glob("*.py"))]
    wrong = [p for p in sorted((SEED / "wrong").glob("*.py")) if not p.name.startswith("limits_")]
    for index, origin in enumerate(right + spread(wrong, CLASS_SIZE - len(right))):
        folder = target / f"student{index:02d}_{'_'.join(origin.relative_to(SEED).with_suffix('').parts)}"
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(origin.read_text() + f"\n# student {index} (from {origin.name})\n")


def submissions(source: Path, unpack: Path) -> dict[str, Path]:
    """Each student's file as jaxgrade's intake picks it (a .py, or a notebook)."""
    from grader.batch.intake import find_submissions
    intake = find_submissions(source, FUNCTION, unpack_to=unpack)
    return {s.student: s.path for s in intake.submissions}


def timed(command: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    """Wall seconds of ``command``, which must exit 0 (its stderr said otherwise)."""
    started = time.monotonic()
    done = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          timeout=900)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return seconds


def otter_run(autograder: Path, submission: Path, out: Path) -> float:
    """``otter run`` of one submission, its results.json written into ``out``."""
    out.mkdir(parents=True)
    return timed([str(OTTER), "run", "-a", str(autograder), "-o", str(out), "--no-logo", str(submission)], OTTER_ENV)


def otter_class(autograder: Path, students: dict[str, Path], out: Path) -> tuple[float, list[float]]:
    """Wall seconds of grading every student with ``otter run``, JOBS at a time, and each run's."""
    started = time.monotonic()
    with ThreadPoolExecutor(JOBS) as pool:
        each = list(pool.map(lambda s: otter_run(autograder, students[s], out / s), students))
    return time.monotonic() - started, each


def otter_score(results: Path) -> tuple[float, float]:
    """(points, points possible) of an Otter results.json; (0, 0) where Otter failed to grade."""
    tests = json.loads(results.read_text())["tests"]
    if any(t["name"] in ("Autograder Failed", "Autograder Error") for t in tests):
        return 0.0, 0.0
    scored = [t for t in tests if t.get("max_score")]
    return sum(t["score"] for t in scored), sum(t["max_score"] for t in scored)


def otter_scores(out: Path, students: dict[str, Path]) -> dict[str, tuple[float, float]]:
    """Otter's score of every student that has a results.json in ``out``."""
    return {s: otter_score(out / s / "results.json") for s in students if (out / s / "results.json").exists()}


def jaxgrade_grade(source: Path, out: Path, cache: Path, regrade: bool) -> float:
    command = [str(BIN / "jaxgrade"), "grade", str(source), "-e", EXERCISE, "-j", str(JOBS), "-o", str(out)]
    return timed(command + ["--regrade"] * regrade, BASE_ENV | {"JAXGRADE_CACHE": str(cache)})


def gradebook(out: Path) -> dict[str, str]:
    """Each gradebook row's student and status."""
    with open(out / "gradebook.csv", newline="") as handle:
        return {row["student"]: row["status"] for row in csv.DictReader(handle)}


def verify(kind: str, found: set[str], students: dict[str, Path]) -> None:
    """Fails the run where ``kind`` left out a student (its gradebook or results lack a row)."""
    lost = sorted(set(students) - found)
    if lost:
        raise SystemExit(f"{kind} did not grade every submission: {len(students) - len(lost)} of {len(students)}; "
                         f"lost: {lost}")


def check(submission: Path, env: dict[str, str]) -> float:
    """Wall seconds of ``jaxgrade check`` of ``submission``, which must get full marks."""
    return timed([str(BIN / "jaxgrade"), "check", "-e", EXERCISE, str(submission)], env, cwd=submission.parent)


def count_in_logs(runtime: Path, word: str) -> int:
    return sum(p.read_text().count(word) for p in runtime.glob("warm-*.log"))


def check_warm(submission: Path, cache: Path, runtime: Path) -> float:
    """A check served by the warm service: one check starts it (untimed), then, once it is
    ready, a check of the file edited is timed; the service's log must say it served that one."""
    env = BASE_ENV | {"JAXGRADE_CACHE": str(cache), "JAXGRADE_RUNTIME_DIR": str(runtime)}
    ready, served = count_in_logs(runtime, " ready"), count_in_logs(runtime, " served ")
    check(submission, env)
    deadline = time.monotonic() + 120
    while count_in_logs(runtime, " ready") <= ready:
        if time.monotonic() > deadline:
            raise SystemExit("the warm grading service did not become ready")
        time.sleep(0.05)
    with open(submission, "a") as handle:
        handle.write("# edited\n")
    seconds = check(submission, env)
    if count_in_logs(runtime, " served ") != served + 1:  # the first check graded in-process
        raise SystemExit("the warm check was not served by the warm grading service")
    return seconds


@dataclass
class Repeat:
    """What one repeat measured: the wall times (TIMINGS), each ``otter run``'s within the class
    run, Otter's score of each student and of the reference alone, and the status jaxgrade's
    cold class run gave each student."""
    seconds: dict[str, float] = field(default_factory=dict)
    otter_each: list[float] = field(default_factory=list)
    otter_scores: dict[str, tuple[float, float]] = field(default_factory=dict)
    otter_reference: tuple[float, float] = (0.0, 0.0)
    jaxgrade_statuses: dict[str, str] = field(default_factory=dict)


def background_fill(cache: Path) -> float:
    """Seconds until the variants' gradings a cold run of a small class leaves to the background
    (grader.batch.warming) are done; the warm run comes after them, as an instructor's next run
    would."""
    started, deadline = time.monotonic(), time.monotonic() + 600
    while not list((cache / "warmed-anon").glob("*-variants")):
        if time.monotonic() > deadline:
            raise SystemExit("the variants were not graded in the background within 10 minutes")
        time.sleep(0.1)
    return time.monotonic() - started


def class_runs(work: Path, autograder: Path, source: Path, students: dict[str, Path], into: Repeat) -> list[Step]:
    """The class graded by Otter, and by jaxgrade cold then warm, each checked to hold every student."""
    def otter() -> None:
        into.seconds["otter_class"], into.otter_each = otter_class(autograder, students, work / "otter-class")
        into.otter_scores = otter_scores(work / "otter-class", students)
        verify("Otter", set(into.otter_scores), students)

    def jaxgrade() -> None:
        cache = work / "class-cache"
        into.seconds["jaxgrade_cold_class"] = jaxgrade_grade(source, work / "cold", cache, regrade=False)
        into.jaxgrade_statuses = gradebook(work / "cold")
        verify("jaxgrade (cold)", set(into.jaxgrade_statuses), students)
        into.seconds["jaxgrade_background_fill"] = background_fill(cache)
        (work / "cold" / "gradebook.csv").unlink()  # so the warm run's own must be written
        into.seconds["jaxgrade_warm_class"] = jaxgrade_grade(source, work / "cold", cache, regrade=True)
        verify("jaxgrade (warm)", set(gradebook(work / "cold")), students)
    return [otter, jaxgrade]


def per_submission(work: Path, autograder: Path, into: Repeat) -> list[Step]:
    """One file (a copy of the reference) graded alone: by Otter (which must give it full marks),
    and by jaxgrade check in-process with an empty cache, in-process with the cache that check
    filled, and through the warm service."""
    submission = work / "one" / "solution.py"
    submission.parent.mkdir()
    shutil.copy(SEED / "reference.py", submission)
    cache, runtime = work / "check-cache", work / "runtime"
    runtime.mkdir(mode=0o700)
    in_process = BASE_ENV | {"JAXGRADE_CACHE": str(cache), "JAXGRADE_NO_DAEMON": "1"}

    def otter() -> None:
        into.seconds["otter_one"] = otter_run(autograder, submission, work / "otter-one")
        into.otter_reference = points, possible = otter_score(work / "otter-one" / "results.json")
        if possible == 0 or points != possible:
            raise SystemExit(f"Otter gave the reference {points:g} of {possible:g}")

    def jaxgrade() -> None:
        into.seconds["check_first"] = check(submission, in_process)
        into.seconds["check_in_process"] = check(submission, in_process)
        try:
            into.seconds["check_warm"] = check_warm(submission, cache, runtime)
        finally:
            stop_services(runtime)
    return [otter, jaxgrade]


def one_repeat(work: Path, autograder: Path, source: Path, students: dict[str, Path], otter_first: bool) -> Repeat:
    """Everything timed once: the class runs, then one submission alone; in each, Otter first
    or jaxgrade first as ``otter_first`` says."""
    repeat = Repeat()
    for otter, jaxgrade in (class_runs(work, autograder, source, students, repeat),
                            per_submission(work, autograder, repeat)):
        for step in (otter, jaxgrade) if otter_first else (jaxgrade, otter):
            step()
    return repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--class", dest="source", type=Path, help="a class download (default: 33 made from the seed)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of everything (medians quoted)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()

    load_start = os.getloadavg()
    install_otter()
    work = Path(tempfile.mkdtemp(prefix="otter-bench-"))
    try:
        source = args.source or work / "class"
        if args.source is None:
            make_class(source)
        students = submissions(source, work / "intake")
        autograder = build_autograder(work)
        repeats: list[Repeat] = []
        print(f"{len(students)} submissions; Otter-Grader {OTTER_VERSION} against jaxgrade, -j {JOBS}; "
              f"load average {format_load(load_start)}", flush=True)
        for repeat in range(args.repeat):
            folder = work / f"repeat-{repeat}"
            folder.mkdir()
            otter_first = repeat % 2 == 0
            repeats.append(one_repeat(folder, autograder, source, students, otter_first))
            print(f"run {repeat + 1} ({'Otter' if otter_first else 'jaxgrade'} first): "
                  + ", ".join(f"{name} {repeats[-1].seconds[name]:.2f} s" for name in TIMINGS)
                  + f"; load {format_load(os.getloadavg())}", flush=True)
            shutil.rmtree(folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    figures = summarise(repeats, load_start, os.getloadavg())
    print_table(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


def summarise(repeats: list[Repeat], load_start: tuple[float, float, float],
              load_end: tuple[float, float, float]) -> dict[str, Any]:
    """The figures: every run, the medians, the ratios Otter / jaxgrade, and what the last
    repeat's graders found (how many each graded, how many with full marks, each student's)."""
    runs = {name: [r.seconds[name] for r in repeats] for name in TIMINGS}
    medians = {name: statistics.median(values) for name, values in runs.items()}
    last = repeats[-1]

    def ratio(otter: str, jaxgrade: str) -> float:
        return medians[otter] / medians[jaxgrade]
    return {
        "otter_version": OTTER_VERSION, "cores": os.cpu_count(), "jobs": JOBS, "submissions": len(last.otter_scores),
        "repeat": len(repeats), "runs": runs, "medians": medians,
        "otter_run_in_class_median_s": statistics.median(s for r in repeats for s in r.otter_each),
        "ratios": {"cold_class": ratio("otter_class", "jaxgrade_cold_class"),
                   "warm_class": ratio("otter_class", "jaxgrade_warm_class"),
                   "one_first_check": ratio("otter_one", "check_first"),
                   "one_in_process": ratio("otter_one", "check_in_process"),
                   "one_warm": ratio("otter_one", "check_warm")},
        "graded": {"otter": len(last.otter_scores), "jaxgrade": len(last.jaxgrade_statuses)},
        "otter_autograder_failures": sum(1 for _, possible in last.otter_scores.values() if not possible),
        "full_marks": {"otter": sum(1 for p, m in last.otter_scores.values() if m and p == m),
                       "jaxgrade": sum(1 for status in last.jaxgrade_statuses.values() if status == "passed")},
        "otter_reference_score": last.otter_reference,
        "students": {s: {"otter": last.otter_scores[s], "jaxgrade": last.jaxgrade_statuses.get(s)}
                     for s in last.otter_scores},
        "load_average_start": load_start, "load_average_end": load_end}


def format_load(average: tuple[float, float, float]) -> str:
    return " / ".join(f"{value:.2f}" for value in average)


def print_table(figures: dict[str, Any]) -> None:
    medians, ratios, count = figures["medians"], figures["ratios"], figures["submissions"]
    print(f"\n| figure (median of {figures['repeat']}) | time | Otter / jaxgrade |\n|---|---|---|")
    rows = [(f"Otter, class of {count}: otter run, {JOBS} at a time", "otter_class", None),
            (f"jaxgrade grade -j {JOBS}, cold (new empty cache)", "jaxgrade_cold_class", "cold_class"),
            ("jaxgrade, after the cold run: the variants graded in the background (nice 19)", "jaxgrade_background_fill",
             None),
            (f"jaxgrade grade -j {JOBS} --regrade, warm (that cache)", "jaxgrade_warm_class", "warm_class"),
            ("Otter, one submission (otter run, the reference)", "otter_one", None),
            ("jaxgrade check, in-process, first check (new empty cache)", "check_first", "one_first_check"),
            ("jaxgrade check, in-process (the cache filled)", "check_in_process", "one_in_process"),
            ("jaxgrade check, served by the warm service", "check_warm", "one_warm")]
    for label, name, ratio in rows:
        per = f" ({medians[name] / count:.2f} s per submission)" if name.endswith("_class") else ""
        print(f"| {label} | {medians[name]:.2f} s{per} | {f'**{ratios[ratio]:.1f}x**' if ratio else ''} |")
    print(f"| Otter, one otter run within the class runs ({JOBS} at a time; median of every one) | "
          f"{figures['otter_run_in_class_median_s']:.2f} s | |")
    graded, full = figures["graded"], figures["full_marks"]
    points, possible = figures["otter_reference_score"]
    missed = [s for s, found in figures["students"].items()
              if found["jaxgrade"] != "passed" and found["otter"][1] and found["otter"][0] == found["otter"][1]]
    print(f"\ngraded: Otter {graded['otter']} of {count} ({full['otter']} with full marks, "
          f"{figures['otter_autograder_failures']} autograder failures), jaxgrade "
          f"{graded['jaxgrade']} of {count} ({full['jaxgrade']} passed); Otter's score of the reference: "
          f"{points:g} / {possible:g}; Otter's full marks that jaxgrade failed: {len(missed)}")
    print(f"load average (1 / 5 / 15 min): start {format_load(figures['load_average_start'])}, "
          f"end {format_load(figures['load_average_end'])}; {figures['cores']} cores")


if __name__ == "__main__":
    main()
