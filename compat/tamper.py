"""compat/tamper.py: tamper evidence under this interpreter's JAX and Python (compat/validate.sh
runs it in each .venv-compat venv after the catalogue). The catalogue holds no submission that
patches JAX, so three of tests/hostile/ are graded here as tests/test_tampering.py grades them
under constraints.txt's JAX: a change during a call and one at import, each named in every
structure check, and an honest control that keeps full marks. Prints one line; exit 1 if any
of them grades otherwise, or where a CPython that has dict version tags (grader.child.watch.
TAGGED_PYTHONS) cannot read them."""
from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from grader import find_exercise, grade

HOSTILE = Path(__file__).resolve().parent.parent / "tests" / "hostile"
SLUG = "named_sharding_replicated"
STRUCTURE = ("structure.placed", "structure.mesh", "structure.spec", "structure.sum_of_placed")
CHANGES = "Your code changes the machinery the grader observes JAX with"
# file: the changes every structure check must name (none: full marks)
EXPECTED = {
    "adds_method_in_call.py": ("adds jax.sharding.NamedSharding.looks_replicated", "replaces json.dumps"),
    "wraps_re_match.py": ("replaces re.match",),
    "honest_configures.py": (),
}


def main() -> int:
    import jax

    from grader.child.watch import Watch, tagged_python
    start, wrong = time.monotonic(), []
    cheap = Watch().cheap
    if tagged_python() and not cheap:  # a release that has the tags, read wrong: every cheap call unwatched
        wrong.append("version tags")
        print(f"compat: tamper: CPython {sys.version_info[0]}.{sys.version_info[1]} has dict version tags, "
              "and the watch cannot read them", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="jaxgrade-compat-tamper-") as folder:
        for name, named in EXPECTED.items():
            shutil.copyfile(HOSTILE / name, Path(folder) / name)
            report = grade(find_exercise(SLUG), Path(folder) / name)
            checks = {c.id: c for c in report.checks}
            if not named:
                ok = report.score == report.max_score
            else:
                ok = all(checks[i].status == "failed" and CHANGES in checks[i].message
                         and all(n in checks[i].message for n in named) for i in STRUCTURE)
            if not ok:
                wrong.append(name)
                print(f"compat: tamper: {name}: " + "; ".join(f"{c.id} {c.status}: {c.message[:200]}"
                                                               for c in report.checks), file=sys.stderr)
    how = "version tags, after every call" if cheap else "every namespace compared, full record only"
    print(f"compat: tamper evidence under JAX {jax.__version__}, Python {sys.version_info[0]}.{sys.version_info[1]} "
          f"({how}): {len(EXPECTED) - len(set(wrong) & set(EXPECTED))} of {len(EXPECTED)} graded as expected, "
          f"{time.monotonic() - start:.0f} s")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
