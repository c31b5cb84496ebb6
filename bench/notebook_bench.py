"""A notebook's check cell (`grader.check()`, issue #45 point 5; through the warm service, issue
#43 point 2), in a real IPython kernel driven by nbclient as Jupyter drives it: the first check
of a kernel, and the later ones (the student reads each report for 3 s), with the warm service
on (the kernel asks it first: grader.notebook.check) and with JAXGRADE_NO_DAEMON=1 (the kernel
grades its cells itself, the next check's child importing JAX while the student reads), beside
`jaxgrade check` on the same file and a bare `python -c "import jax; jax.devices()"`, all
interleaved. The service runs in a runtime folder of this run's own, started by a first kernel
whose first check finds none (that check is reported on its own), and is stopped at the end.
Goals: later checks at most 1.0 s, the first within 1.2x of `jaxgrade check`."""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import nbformat
from nbclient import NotebookClient

from bench import BIN, REFERENCE  # bench/bench.py, beside this script

CHECKS = int(os.environ.get("BENCH_RUNS", "7"))
TIMED = ("import time, grader\ntime.sleep(3)  # the student reads the last report\nstarted = time.monotonic()\n"
         "report = grader.check('named_sharding_replicated')\nprint(f'took {time.monotonic() - started:.3f}')")
READY_S = 120.0


@contextlib.contextmanager
def environment(**changes: str | None) -> Iterator[None]:
    """This process's environment changed (None: unset) while a kernel starts: it inherits it."""
    saved = {name: os.environ.get(name) for name in changes}
    for name, value in changes.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def kernel_checks(folder: Path, kernel: str = "python3", checks: int = CHECKS, **changes: str | None) -> list[float]:
    """Seconds of each check cell, in one kernel (``kernel``, a kernelspec's name): the
    reference defined, then ``checks`` checks."""
    cells = [REFERENCE.read_text()] + [TIMED.replace("time.sleep(3)", "pass") if i == 0 else TIMED
                                       for i in range(checks)]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    with environment(**changes):
        NotebookClient(notebook, timeout=600, kernel_name=kernel,
                       resources={"metadata": {"path": str(folder)}}).execute()
    said = ["".join(o.get("text", "") for o in cell.outputs) for cell in notebook.cells[1:]]
    return [float(re.search(r"took (\d+\.\d+)", text).group(1)) for text in said]


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, timeout=300)
    return time.perf_counter() - started


def served(runtime: Path) -> int:
    return sum(p.read_text().count(" served ") for p in runtime.glob("warm-*.log"))


def stop_services(runtime: Path) -> None:
    for path in runtime.glob("warm-*.pid"):
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(path.read_text()), signal.SIGTERM)
    deadline = time.monotonic() + 10
    while list(runtime.glob("warm-*.pid")) and time.monotonic() < deadline:
        time.sleep(0.1)
    shutil.rmtree(runtime, ignore_errors=True)


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="jaxgrade-notebook-bench-"))
    runtime = Path(tempfile.mkdtemp(prefix="jgw-bench-", dir="/tmp"))  # short: a socket's path fits 108 bytes
    on = {"JAXGRADE_NO_DAEMON": None, "CI": None, "JAXGRADE_RUNTIME_DIR": str(runtime)}
    off = {"JAXGRADE_NO_DAEMON": "1"}
    env = {**os.environ, "JAXGRADE_NO_DAEMON": "1"}  # jaxgrade check in-process, as before the warm service
    check = [str(BIN / "jaxgrade"), "check", str(REFERENCE), "--format", "json"]
    bare = [sys.executable, "-c", "import jax; jax.devices()"]
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    try:
        timed(check, env)  # the compilation cache filled from the reference, as in a course
        cold = kernel_checks(folder, **on)[0]  # no service yet: graded in the kernel, which starts one
        deadline = time.monotonic() + READY_S
        while not any(" ready" in p.read_text() for p in runtime.glob("warm-*.log")):
            if time.monotonic() > deadline:
                raise SystemExit(f"no warm service became ready in {runtime}")
            time.sleep(0.2)
        results: dict[str, tuple[list[float], list[float]]] = {"service": ([], []), "off": ([], [])}
        checks, bares = [], []
        before = served(runtime)
        for _ in range(3):
            for mode, changes in (("service", on), ("off", off)):
                took = kernel_checks(folder, **changes)
                results[mode][0].append(took[0])
                results[mode][1].extend(took[1:])
            checks.append(timed(check, env))
            bares.append(timed(bare, {**env, "JAX_NUM_CPU_DEVICES": "8"}))
        through = served(runtime) - before
    finally:
        stop_services(runtime)
    c, b = statistics.median(checks), statistics.median(bares)
    print(f"first check of the run, no service yet (graded in the kernel, which starts one): {cold:.3f} s")
    for mode, said in (("service", "warm service on"), ("off", "JAXGRADE_NO_DAEMON=1")):
        firsts, laters = results[mode]
        first, later = statistics.median(firsts), statistics.median(laters)
        print(f"grader.check() in a kernel, {said}: first {first:.3f} s (median of 3 kernels; / jaxgrade check "
              f"{first / c:.2f}, goal <= 1.2), later {later:.3f} s (median of {len(laters)}; goal <= 1.0 s; "
              f"/ bare import {later / b:.2f})")
    print(f"checks the service answered: {through} of {3 * CHECKS} with it on")
    print(f"jaxgrade check on the same file (JAXGRADE_NO_DAEMON=1): {c:.3f} s; "
          f"bare python -c 'import jax; jax.devices()': {b:.3f} s")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
