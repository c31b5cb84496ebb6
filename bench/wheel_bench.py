"""The student's loop from a wheel installed in a venv, side by side with the checkout (issue #58
point 4): jaxgrade's wheel is built (``pip wheel --no-deps``, as tests/test_packaging.py builds
it), installed into a fresh venv with its dependencies at constraints.txt's versions and ipykernel
(``pip install -c constraints.txt WHEEL ipykernel``: what a student's ``pip install jaxgrade
jupyter`` gives, from pip's cache when it holds them), and a kernelspec names that venv's Python.

Each round times, for the checkout's venv and the wheel's (who goes first alternates), in an
empty folder of each's own: the notebook check (``grader.check()`` in a real IPython kernel
driven by nbclient, the warm service on: the first check of the kernel, then BENCH_WHEEL_CHECKS
later ones, each 3 s after the last, as bench/notebook_bench.py does), ``jaxgrade check``
in-process (``--no-daemon``: a first check's cost) and a served re-check (``jaxgrade check`` of
the file just edited, answered by the warm service), each followed by a bare ``python -c "import jax; jax.devices()"`` of the
same venv (what the machine's load makes of a JAX import, beside it). Printed: the medians of each for each install, and the median of the
paired ratios wheel/checkout (the same round's figures). Before the rounds, each install's
services are started and ready (their start is not timed). Goal: a re-check (the kernel's later
checks and the served CLI re-check) under 0.5 s from the wheel, as from the checkout.

BENCH_RUNS rounds (default 3); everything in temporary folders, removed after, the services stopped.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import BIN, REFERENCE, REPO  # bench/bench.py, beside this script
from notebook_bench import kernel_checks, served, stop_services
from warm_bench import timed

RUNS = int(os.environ.get("BENCH_RUNS", "3"))
LATER = int(os.environ.get("BENCH_WHEEL_CHECKS", "4"))
READY_S = 180.0
GOAL_S = 0.5
MEASURES = ("notebook first", "notebook later", "check in-process", "served re-check", "bare import")
BARE = ["-c", "import jax; jax.devices()"]
BARE_ENV = {"JAX_PLATFORMS": "cpu", "JAX_NUM_CPU_DEVICES": "8"}  # as the grader's children see JAX


def pip(command: list[str], cwd: Path) -> None:
    """A pip command, its output shown only when it fails (pip's notes on this machine's index folders are noise)."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def build_venv(scratch: Path) -> Path:
    """A fresh venv with the wheel built from this checkout installed; its bin folder."""
    wheels, venv = scratch / "wheel", scratch / "venv"
    started = time.monotonic()
    pip([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(REPO)], scratch)
    wheel = next(wheels.glob("jaxgrade-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip([str(venv / "bin" / "python"), "-m", "pip", "install", "-c", str(REPO / "constraints.txt"), str(wheel),
         "ipykernel"], scratch)
    print(f"{wheel.name} built and installed with its dependencies into a fresh venv in "
          f"{time.monotonic() - started:.0f} s", flush=True)
    return venv / "bin"


def kernelspec(jupyter: Path, name: str, python: Path) -> None:
    """A kernelspec ``name`` under ``jupyter`` (a JUPYTER_PATH folder) that runs ``python``'s ipykernel."""
    folder = jupyter / "kernels" / name
    folder.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (folder / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": name, "language": "python"}))


class Install:
    """One install's side of the bench: its Python, kernel, runtime and working folders."""

    def __init__(self, name: str, bin_folder: Path, scratch: Path, jupyter: Path) -> None:
        self.name, self.bin = name, bin_folder
        self.kernel = f"jaxgrade-{name}"
        kernelspec(jupyter, self.kernel, bin_folder / "python")
        self.runtime = Path(tempfile.mkdtemp(prefix=f"jgw-{name[:5]}-", dir="/tmp"))  # a socket's path fits 108 bytes
        self.folder, self.work = scratch / f"{name}-kernel", scratch / f"{name}-work"
        self.folder.mkdir()
        self.work.mkdir()
        shutil.copy(REFERENCE, self.work / "solution.py")
        # A compilation cache of its own, filled from nothing (the user's is left alone): the
        # checkout fills it from the reference, the wheel (no answer key) has none to fill.
        self.variables = {"JAXGRADE_RUNTIME_DIR": str(self.runtime), "JAXGRADE_CACHE": str(scratch / f"{name}-cache"),
                          "JUPYTER_PATH": str(jupyter)}
        self.env = {k: v for k, v in os.environ.items() if k not in ("JAXGRADE_NO_DAEMON", "CI")}
        self.env.update(NO_COLOR="1", **self.variables)
        self.edits = 0

    def notebook(self) -> list[float]:
        """The kernel's check cells, the service on (the kernel inherits these variables)."""
        return kernel_checks(self.folder, self.kernel, LATER + 1, JAXGRADE_NO_DAEMON=None, CI=None, **self.variables)

    def check(self, *extra: str) -> float:
        return timed([str(self.bin / "jaxgrade"), "check", "solution.py", *extra], self.env, self.work)

    def recheck(self) -> float:
        """The file edited, then checked."""
        self.edits += 1
        with open(self.work / "solution.py", "a") as handle:
            handle.write(f"# edit {self.edits}\n")
        took = self.check()
        time.sleep(0.3)  # the service logs "served" after its answer
        return took

    def warm_up(self) -> None:
        """The kernel's and the CLI's services started, and a re-check served, untimed."""
        self.notebook()
        deadline = time.monotonic() + READY_S
        before = served(self.runtime)
        self.recheck()
        while served(self.runtime) == before:  # graded in-process, starting the CLI's service
            if time.monotonic() > deadline:
                raise SystemExit(f"no warm service answered {self.name}'s jaxgrade check in {self.runtime}")
            time.sleep(1.0)
            self.recheck()


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="jaxgrade-wheel-bench-"))
    installs: list[Install] = []
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    try:
        wheel_bin = build_venv(scratch)
        jupyter = scratch / "jupyter"
        installs = [Install("checkout", BIN, scratch, jupyter), Install("wheel", wheel_bin, scratch, jupyter)]
        for install in installs:
            install.warm_up()
        figures = {i.name: {m: [] for m in MEASURES} for i in installs}
        before = {i.name: served(i.runtime) for i in installs}
        for round_ in range(RUNS):
            for install in installs[::-1] if round_ % 2 else installs:  # who goes first alternates
                took = install.notebook()
                mine = figures[install.name]
                mine["notebook first"].append(took[0])
                mine["notebook later"].append(statistics.median(took[1:]))
                mine["check in-process"].append(install.check("--no-daemon"))
                mine["served re-check"].append(install.recheck())
                mine["bare import"].append(timed([str(install.bin / "python"), *BARE], {**install.env, **BARE_ENV},
                                                 install.work))
            print(f"round {round_ + 1}: " + "; ".join(
                f"{name}: " + ", ".join(f"{m} {f[m][-1]:.3f}" for m in MEASURES) for name, f in figures.items()),
                flush=True)
        answered = {i.name: served(i.runtime) - before[i.name] for i in installs}
    finally:
        for install in installs:
            stop_services(install.runtime)
        shutil.rmtree(scratch, ignore_errors=True)
    checkout, wheel = figures["checkout"], figures["wheel"]
    print(f"medians of {RUNS} rounds (a kernel's later checks: the median of its {LATER}; ratio: the median of "
          f"the rounds' wheel/checkout):")
    for measure in MEASURES:
        ratios = [w / c for w, c in zip(wheel[measure], checkout[measure])]
        print(f"  {measure:17} checkout {statistics.median(checkout[measure]):.3f} s   wheel "
              f"{statistics.median(wheel[measure]):.3f} s   wheel/checkout {statistics.median(ratios):.2f}")
    for name, mine in figures.items():
        ratios = [r / b for r, b in zip(mine["served re-check"], mine["bare import"])]
        print(f"  {name}: served re-check / the bare import after it {statistics.median(ratios):.2f}")
    recheck = max(statistics.median(wheel["notebook later"]), statistics.median(wheel["served re-check"]))
    print(f"a re-check from the wheel: {recheck:.3f} s at most (goal < {GOAL_S} s: "
          f"{'met' if recheck < GOAL_S else 'NOT met'})")
    print(f"checks the services answered (of {RUNS * (LATER + 2)} each: the kernels' and the re-checks): "
          + ", ".join(f"{name} {count}" for name, count in answered.items()))
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
