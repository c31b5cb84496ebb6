"""Verdicts before and after a change: every check's status for every submission of both bench classes.

    .venv/bin/python bench/verdicts.py record FILE [--seed N]    # grade, write the statuses to FILE
    .venv/bin/python bench/verdicts.py compare FILE [--seed N]   # grade again, exit 1 if any status differs

The submissions are the realistic class (bench/realistic_class/*.py, time-outs included) and
today's class (the exercise's reference, right/ and wrong/ variants), each graded once with
``jaxgrade grade -j 2 --regrade`` in a fresh compilation cache, exactly as a class run grades them.
``compare`` also lists the counterexamples that changed (a shorter shrink may find another
smallest input; the statuses must not change), and checks that every realistic submission
fails a check of the category its ``# expect:`` line names (full marks where it has none).
Not run by ``make bench`` (it proves verdicts, it measures nothing).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent
EXERCISE = "named_sharding_replicated"
REALISTIC = REPO / "bench" / "realistic_class"


def submissions() -> dict[str, Path]:
    """Every submission by the name its verdicts are stored under."""
    from grader.authoring.exercise import find_exercise
    exercise = find_exercise(EXERCISE)
    found = {f"realistic/{p.stem}": p for p in sorted(REALISTIC.glob("*.py"))}
    found["exercise/reference"] = exercise.reference
    for kind in ("right", "wrong"):
        found.update({f"exercise/{kind}_{v.path.stem}": v.path for v in exercise.variants(kind)})
    return found


def grade_all(seed: int) -> dict[str, dict]:
    work = Path(tempfile.mkdtemp(prefix="jaxgrade-verdicts-"))
    try:
        folder = work / "class"
        folder.mkdir()
        named = submissions()
        for name, path in named.items():
            shutil.copyfile(path, folder / (name.replace("/", "__") + ".py"))
        env = {**os.environ, "JAXGRADE_CACHE": str(work / "cache")}
        subprocess.run([str(BIN / "jaxgrade"), "grade", str(folder), "-e", EXERCISE, "-o", str(work / "out"),
                        "-j", "2", "--regrade", "--seed", str(seed)], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        found = {}
        for name in named:
            student = name.replace("/", "__").lower()
            record = json.loads((work / "out" / "students" / student / "result.json").read_text())
            report = record["report"]
            found[name] = {"score": report["score"],
                           "statuses": {c["id"]: c["status"] for c in report["checks"]},
                           "counterexamples": {c["id"]: c.get("counterexample") for c in report["checks"]
                                               if c.get("counterexample")}}
        return found
    finally:
        shutil.rmtree(work, ignore_errors=True)


def expectation_problems(found: dict[str, dict]) -> list[str]:
    """Realistic submissions that do not fail what their ``# expect:`` line says (or lose points without one)."""
    from grader.authoring.exercise import EXPECT
    problems = []
    for name, verdict in found.items():
        if not name.startswith("realistic/"):
            continue
        match = EXPECT.search((REALISTIC / (name.split("/", 1)[1] + ".py")).read_text())
        failed = {check.split(".")[0] for check, status in verdict["statuses"].items() if status != "passed"}
        if match is None and failed:
            problems.append(f"{name}: a correct submission fails {sorted(failed)}")
        elif match is not None and match.group(1) not in failed:
            problems.append(f"{name}: expected to fail a {match.group(1)} check, fails {sorted(failed)}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("record", "compare"))
    parser.add_argument("file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    found = grade_all(args.seed)
    problems = expectation_problems(found)
    for problem in problems:
        print(f"expectation: {problem}")
    if args.action == "record":
        Path(args.file).write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        print(f"recorded the verdicts of {len(found)} submissions in {args.file}")
        return 1 if problems else 0
    before = json.loads(Path(args.file).read_text())
    changed_status, changed_example = [], []
    for name in sorted(set(before) | set(found)):
        old, new = before.get(name), found.get(name)
        if old is None or new is None:
            changed_status.append(f"{name}: only {'after' if old is None else 'before'}")
            continue
        for check in sorted(set(old["statuses"]) | set(new["statuses"])):
            if old["statuses"].get(check) != new["statuses"].get(check):
                changed_status.append(f"{name} {check}: {old['statuses'].get(check)} -> {new['statuses'].get(check)}")
        for check in sorted(set(old["counterexamples"]) | set(new["counterexamples"])):
            if old["counterexamples"].get(check) != new["counterexamples"].get(check):
                changed_example.append(f"{name} {check}: {old['counterexamples'].get(check)} -> "
                                       f"{new['counterexamples'].get(check)}")
    for line in changed_status:
        print(f"status changed: {line}")
    for line in changed_example:
        print(f"counterexample changed: {line}")
    print(f"{len(found)} submissions: {len(changed_status)} check statuses changed, "
          f"{len(changed_example)} counterexamples changed")
    return 1 if changed_status or problems else 0


if __name__ == "__main__":
    sys.exit(main())
