"""What an exported course pack records of the JAX it was made and validated with
(grader.authoring.export.pack): pack.json and constraints.txt in every export, and the one line
`jaxgrade check` prints when the JAX here is another."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

from grader.authoring.exercise import find_exercise
from grader.authoring.export import export_gradescope, export_prairielearn, export_student
from grader.authoring.export.pack import PACK_FILE, SCHEMA, read_pack_record, version_warning
from grader.authoring.validate import jobs_for, validated_seeds
from grader.authoring.validated import Verdicts, verdicts_folder

REPO = Path(__file__).resolve().parent.parent
SLUG = "sgd_step"  # one device: its check is the quickest


@pytest.fixture(scope="module")
def exercise():
    return find_exercise(SLUG)


def _pins(text: str) -> dict[str, str]:
    return dict(line.split("==", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_every_export_records_this_jax_and_pins_what_is_installed(exercise, tmp_path, monkeypatch):
    monkeypatch.setenv("JAXGRADE_CACHE", str(tmp_path / "cache"))  # nothing validated there
    student = export_student(exercise, tmp_path / "student")
    record = read_pack_record(student / ".jaxgrade" / "exercises" / SLUG)
    assert record == {"schema": SCHEMA, "exercise": SLUG, "jaxgrade": record["jaxgrade"], "jax": version("jax"),
                      "jaxlib": version("jaxlib"), "python": "%d.%d" % sys.version_info[:2], "validated_seeds": 0}
    pins = _pins((student / "constraints.txt").read_text())
    for name in ("jax", "jaxlib", "numpy", "hypothesis", "scipy"):
        assert pins[name] == version(name), name
    assert "ml_dtypes" in pins or "ml-dtypes" in pins
    assert "pip install -c constraints.txt jaxgrade" in (student / "README.md").read_text()

    with zipfile.ZipFile(export_gradescope(exercise, tmp_path / "autograder.zip")) as archive:
        assert json.loads(archive.read(f"exercises/{SLUG}/{PACK_FILE}"))["jax"] == version("jax")
        assert _pins(archive.read("jaxgrade/constraints.txt").decode())["jax"] == version("jax")
    question = export_prairielearn(exercise, tmp_path / "question")
    assert read_pack_record(question / "tests" / "exercises" / SLUG)["jax"] == version("jax")
    assert _pins((question / "image" / "jaxgrade" / "constraints.txt").read_text())["jaxlib"] == version("jaxlib")
    assert "-c /opt/jaxgrade-src/constraints.txt" in (question / "image" / "Dockerfile").read_text()


def test_validated_seeds_counts_the_seeds_every_grading_held_under(exercise, tmp_path, monkeypatch):
    monkeypatch.setenv("JAXGRADE_CACHE", str(tmp_path / "cache"))
    assert validated_seeds(exercise) == 0
    store = Verdicts(exercise, verdicts_folder())
    jobs = jobs_for(exercise, (0, 1), (0, 1))
    held = {"score": 1.0, "max_score": 1.0, "duration_s": 0.1, "failed_categories": [], "settled": False}
    for job in jobs:  # what `jaxgrade validate --seeds 2` keeps when every grading held
        store.keep(store.key(job.path, job.name, job.expect, job.seed), held)
    store.save()
    assert validated_seeds(exercise) == 2
    last = next(job for job in reversed(jobs) if job.seed == 1)  # one grading of seed 1 not held
    stored = json.loads(store.path.read_text())
    del stored[store.key(last.path, last.name, last.expect, last.seed)]
    store.path.write_text(json.dumps(stored))
    assert validated_seeds(exercise) == 1
    assert validated_seeds(exercise, seeds=(0,)) == 1
    monkeypatch.setenv("JAXGRADE_CACHE", "off")
    assert validated_seeds(exercise) == 0


def _student_pack(exercise, tmp_path: Path, recorded_jax: str | None) -> Path:
    out = export_student(exercise, tmp_path / "student")
    shutil.copy(REPO / "exercises" / SLUG / "reference.py", out / f"{SLUG}.py")
    if recorded_jax is not None:
        path = out / ".jaxgrade" / "exercises" / SLUG / PACK_FILE
        path.write_text(json.dumps({**json.loads(path.read_text()), "jax": recorded_jax, "validated_seeds": 5}))
    return out


def _check(pack: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "JAXGRADE_EXERCISES"}
    return subprocess.run([sys.executable, str(pack / "check")], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow
def test_check_warns_in_one_line_when_the_pack_was_validated_with_another_jax(exercise, tmp_path):
    pack = _student_pack(exercise, tmp_path, recorded_jax="0.9.2")
    done = _check(pack, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert warnings == [f"jaxgrade: warning: this exercise was validated with JAX 0.9.2, this machine has JAX "
                        f"{version('jax')}: grades may differ from your instructor's (the pack's constraints.txt "
                        f"pins the versions: pip install -c constraints.txt jaxgrade)"], done.stderr
    assert "all checks passed" in done.stdout and "0.9.2" not in done.stdout  # the report itself is unchanged


@pytest.mark.slow
def test_check_says_nothing_when_the_pack_was_made_with_this_jax(exercise, tmp_path):
    pack = _student_pack(exercise, tmp_path, recorded_jax=None)
    done = _check(pack, tmp_path)
    assert done.returncode == 0 and "all checks passed" in done.stdout, done.stdout + done.stderr
    assert "warning" not in done.stderr and "JAX" not in done.stderr, done.stderr


def test_version_warning_reads_only_a_pack_record(tmp_path):
    assert version_warning(REPO / "exercises" / SLUG) is None  # the catalogue's own folder: no pack
    (tmp_path / PACK_FILE).write_text("not json")
    assert version_warning(tmp_path) is None
    (tmp_path / PACK_FILE).write_text(json.dumps({"schema": SCHEMA, "jax": "0.8.3", "validated_seeds": 0}))
    assert "exported (not validated) with JAX 0.8.3" in version_warning(tmp_path)
