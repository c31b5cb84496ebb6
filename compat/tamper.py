"""compat/tamper.py: forgery under this interpreter's JAX and Python (compat/validate.sh runs it
in each .venv-compat venv after the catalogue). The catalogue holds no submission that edits
its own record or patches JAX, so three of tests/hostile/ are graded here as tests/test_witness.py
and tests/test_tampering.py grade them under constraints.txt's JAX: a reply forged as it is
framed (placements and layouts naming one device, x on eight), which the witness's run must
contradict in every structure check, and two controls that keep full marks (patches to JAX and
json that forge nothing; configuration through public APIs). Prints one line; exit 1 if any of
them grades otherwise."""
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
DIVERGED = "What your code reported is not what it computed"
# file: whether every structure check must fail on the witness's divergence (else: full marks)
EXPECTED = {"forges_placements.py": True, "adds_method_in_call.py": False, "honest_configures.py": False}


def main() -> int:
    import jax

    start, wrong = time.monotonic(), []
    with tempfile.TemporaryDirectory(prefix="jaxgrade-compat-tamper-") as folder:
        for name, forged in EXPECTED.items():
            shutil.copyfile(HOSTILE / name, Path(folder) / name)
            report = grade(find_exercise(SLUG), Path(folder) / name)
            checks = {c.id: c for c in report.checks}
            if forged:
                ok = all(checks[i].status == "failed" and DIVERGED in checks[i].message for i in STRUCTURE)
            else:
                ok = report.score == report.max_score
            if not ok:
                wrong.append(name)
                print(f"compat: tamper: {name}: " + "; ".join(f"{c.id} {c.status}: {c.message[:200]}"
                                                               for c in report.checks), file=sys.stderr)
    print(f"compat: forgery under JAX {jax.__version__}, Python {sys.version_info[0]}.{sys.version_info[1]}: "
          f"{len(EXPECTED) - len(wrong)} of {len(EXPECTED)} graded as expected, {time.monotonic() - start:.0f} s")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
