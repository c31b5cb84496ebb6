"""A notebook's check cell (`grader.check()`, issue #45 point 5), in a real IPython kernel driven
by nbclient as Jupyter drives it: the first check of a kernel, and the later ones (the student
reads each report for 3 s, as the next check's child imports JAX), beside `jaxgrade check` on
the same file and a bare `python -c "import jax; jax.devices()"`, interleaved. Goals: later
checks at most 1.0 s, the first within 1.2x of `jaxgrade check`."""
from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from bench import BIN, REFERENCE  # bench/bench.py, beside this script

CHECKS = int(os.environ.get("BENCH_RUNS", "7"))
TIMED = ("import time, grader\ntime.sleep(3)  # the student reads the last report\nstarted = time.monotonic()\n"
         "report = grader.check('named_sharding_replicated')\nprint(f'took {time.monotonic() - started:.3f}')")


def kernel_checks(folder: Path) -> list[float]:
    """Seconds of each check cell, in one kernel: the reference defined, then CHECKS checks."""
    cells = [REFERENCE.read_text()] + [TIMED.replace("time.sleep(3)", "pass") if i == 0 else TIMED
                                       for i in range(CHECKS)]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    said = ["".join(o.get("text", "") for o in cell.outputs) for cell in notebook.cells[1:]]
    return [float(re.search(r"took (\d+\.\d+)", text).group(1)) for text in said]


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, timeout=300)
    return time.perf_counter() - started


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="jaxgrade-notebook-bench-"))
    env = {**os.environ, "JAXGRADE_NO_DAEMON": "1"}  # jaxgrade check in-process, as before the warm service
    check = [str(BIN / "jaxgrade"), "check", str(REFERENCE), "--format", "json"]
    bare = [sys.executable, "-c", "import jax; jax.devices()"]
    timed(check, env)  # the compilation cache filled from the reference, as in a course
    firsts, laters, checks, bares = [], [], [], []
    for _ in range(3):
        took = kernel_checks(folder)
        firsts.append(took[0])
        laters.extend(took[1:])
        checks.append(timed(check, env))
        bares.append(timed(bare, {**env, "JAX_NUM_CPU_DEVICES": "8"}))
    first, later, c, b = (statistics.median(v) for v in (firsts, laters, checks, bares))
    print(f"grader.check() in a kernel: first {first:.3f} s (median of 3 kernels), later {later:.3f} s "
          f"(median of {len(laters)}; goal <= 1.0 s)")
    print(f"jaxgrade check on the same file: {c:.3f} s; first kernel check / jaxgrade check: {first / c:.2f} "
          f"(goal <= 1.2)")
    print(f"bare python -c 'import jax; jax.devices()': {b:.3f} s; later kernel check / bare import: {later / b:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
