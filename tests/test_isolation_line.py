"""The one line a run prints about the sandbox's isolation layers (grader.sandbox.isolation):
which are missing and which are in force, once, and nothing where every layer is in force."""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.sandbox.isolation import IsolationNotice, isolation_line

REPO = Path(__file__).resolve().parent.parent
SLUG = "sgd_step"
# The grader run as nobody, keeping only the right to read every file (this machine's Python
# lives under /root), as tests/test_sandbox.py does: no uid to drop to, so layers go missing.
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
             "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]


def _layer(active: bool) -> dict:
    return {"active": active, "detail": "why"}


def test_the_line_names_missing_and_active_layers_and_is_silent_when_none_is_missing():
    assert isolation_line({"user": _layer(True), "network": _layer(True)}) is None
    assert isolation_line({}) is None and isolation_line(None) is None
    line = isolation_line({"time": _layer(True), "cgroup": _layer(False), "user": _layer(True),
                           "processes": _layer(False)})
    assert line == ("jaxgrade: isolation: 2 of 4 layers; missing: cgroup, processes; active: time, user "
                    "(each report's environment.protections says why)")
    assert "\n" not in line


def test_the_notice_prints_once_per_run():
    stream = io.StringIO()
    notice = IsolationNotice(stream)
    notice.report({"user": _layer(True)})  # nothing missing: nothing said, and not yet done
    for _ in range(5):
        notice.report({"user": _layer(True), "cgroup": _layer(False)})
    assert stream.getvalue().count("\n") == 1 and "missing: cgroup" in stream.getvalue()


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to start a grader as nobody")
def test_check_without_root_says_once_which_layers_are_missing(tmp_path):
    tmp_path.chmod(0o755)
    solution = tmp_path / f"{SLUG}.py"
    shutil.copy(REPO / "exercises" / SLUG / "reference.py", solution)
    solution.chmod(0o644)
    done = subprocess.run([*AS_NOBODY, sys.executable, "-m", "grader", "check", str(solution), "-e", SLUG],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "JAXGRADE_CACHE": "off", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)})
    assert "all checks passed" in done.stdout, done.stdout + done.stderr  # the same grade
    lines = [line for line in done.stderr.splitlines() if "isolation" in line]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("jaxgrade: isolation: ") and "missing: " in lines[0] and "user" in lines[0]
    assert "active: " in lines[0] and "time" in lines[0].split("active: ")[1]


@pytest.mark.slow
def test_check_with_every_layer_prints_no_isolation_line(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("every layer needs root here")
    solution = tmp_path / f"{SLUG}.py"
    shutil.copy(REPO / "exercises" / SLUG / "reference.py", solution)
    done = subprocess.run([sys.executable, "-m", "grader", "check", str(solution), "-e", SLUG, "--format", "json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "JAXGRADE_CACHE": "off"})
    assert done.returncode == 0, done.stderr
    assert "isolation" not in done.stderr, done.stderr
