"""The pytest plugin (grader.pytest_plugin, the ``pytest11`` entry point): a folder that names a
solution and its exercise runs each check as a test item, from the outside, as a student's
``pytest`` or an IDE's test explorer runs it (pytester: a real pytest in a scratch folder, a
subprocess for every run: an in-process one drops the modules it imported when it ends, and the
grader's objects made before it, holding the old ones, fail isinstance checks afterwards)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

from grader import find_exercise
from grader.authoring.export import export_student

pytest_plugins = ["pytester"]

SLUG = "named_sharding_replicated"
EXERCISE = find_exercise(SLUG)
# Read here, not in a test: pytester drops the modules a test imported when it ends, and the
# exercise keeps its checks module, made with the modules of its time.
CHECKS = [(check.id, check.category) for check in EXERCISE.checks]
RIGHT = EXERCISE.directory / "right" / "jitted.py"
WRONG = EXERCISE.directory / "wrong" / "structure_all_devices.py"  # fails structure.mesh only
CONFIG = f'solution = "solution.py"\nexercise = "{SLUG}"\n'


def _folder(pytester: pytest.Pytester, solution: str, config: str | None = CONFIG) -> None:
    shutil.copy(EXERCISE.directory / solution, pytester.path / "solution.py")
    if config is not None:
        (pytester.path / "jaxgrade.toml").write_text(config)


def _junit_points(path) -> dict[str, tuple[float, float]]:
    """Each testcase's (points, max_points) from pytest's --junitxml."""
    found = {}
    for case in ElementTree.parse(path).iter("testcase"):
        properties = {p.get("name"): float(p.get("value")) for p in case.iter("property")}
        found[case.get("name")] = (properties["points"], properties["max_points"])
    return found


def test_collects_one_item_per_check_named_by_id(pytester):
    _folder(pytester, "right/jitted.py")
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    listed = [line for line in result.outlines if line.startswith("solution.py::")]
    assert listed == [f"solution.py::{check_id}" for check_id, _ in CHECKS]


def test_a_folder_without_configuration_collects_nothing_of_it(pytester):
    _folder(pytester, "right/jitted.py", config=None)
    pytester.makepyfile(test_own="def test_own():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    assert [line for line in result.outlines if "::" in line] == ["test_own.py::test_own"]
    assert "jaxgrade" not in result.stdout.str()


def test_pyproject_table_configures_and_testpaths_do_not_hide_the_solution(pytester):
    _folder(pytester, "right/jitted.py", config=None)
    pytester.makepyprojecttoml(f'[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n[tool.jaxgrade]\n{CONFIG}')
    (pytester.path / "tests").mkdir()
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    assert sum(line.startswith("solution.py::") for line in result.outlines) == len(EXERCISE.points)


@pytest.mark.parametrize(("config", "message"), [
    ('solution = "missing.py"\n', "no such file:"),
    ('solution = "solution.py"\ncourse = "x"\n', "unknown key 'course'"),
    ('exercise = "x"\n', 'names no solution; add solution = "your_file.py"'),
])
def test_a_wrong_configuration_says_what_to_write(pytester, config, message):
    _folder(pytester, "right/jitted.py", config=config)
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and message in result.stderr.str()


def test_an_unknown_exercise_is_one_line_at_collection(pytester):
    _folder(pytester, "right/jitted.py", config='solution = "solution.py"\nexercise = "named_sharding_replicatd"\n')
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error
    result.stdout.fnmatch_lines(["*jaxgrade: unknown exercise 'named_sharding_replicatd': did you mean "
                                 "named_sharding_replicated?*"])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.slow
def test_a_right_solution_passes_every_check(pytester):
    _folder(pytester, "right/jitted.py")
    result = pytester.runpytest_subprocess("-v")
    result.assert_outcomes(passed=len(EXERCISE.points))
    for check_id, _ in CHECKS:
        result.stdout.fnmatch_lines([f"solution.py::{check_id} PASSED*"])
    result.stdout.fnmatch_lines([f"jaxgrade: solution.py: score {EXERCISE.max_score:g}/{EXERCISE.max_score:g} · "
                                 "all checks passed"])


@pytest.mark.slow
def test_a_wrong_solution_fails_its_check_with_the_explanation_and_the_points_of_jaxgrade_check(pytester):
    """Named with --jaxgrade (no configuration): the failing check's item fails with the report's
    explanation, the JUnit XML carries every check's points, the same as the library's grading;
    -k selects by category, --lf reruns the failed check alone."""
    _folder(pytester, "wrong/structure_all_devices.py", config=None)
    result = pytester.runpytest_subprocess("--jaxgrade", "solution.py", "--junitxml=junit.xml")
    result.assert_outcomes(passed=len(EXERCISE.points) - 1, failed=1)
    result.stdout.fnmatch_lines(["*structure.mesh: The mesh is jax.devices()*",  # fnmatch: [ starts a class
                                 "Your mesh holds 8 devices: cpu:0 … cpu:7;*",
                                 "expected:  Mesh(np.array(jax.devices()*",
                                 "observed:  a mesh of shape (8,) over 8 devices*",
                                 "hint: *", "FAILED solution.py::structure.mesh*"])
    checked = subprocess.run([sys.executable, "-m", "grader", "check", str(WRONG), "-e", SLUG, "--format", "json"],
                             capture_output=True, text=True, timeout=300)
    report = json.loads(checked.stdout)
    assert _junit_points(pytester.path / "junit.xml") == \
        {c["id"]: (c["score"], c["max_score"]) for c in report["checks"]}

    selected = pytester.runpytest_subprocess("--jaxgrade", f"solution.py::{SLUG}", "-k", "structure", "-v")
    structure = [check_id for check_id, category in CHECKS if category == "structure"]
    selected.assert_outcomes(passed=len(structure) - 1, failed=1, deselected=len(EXERCISE.points) - len(structure))

    again = pytester.runpytest_subprocess("--jaxgrade", "solution.py", "--lf", "-q")
    again.assert_outcomes(failed=1)  # the failed check alone ran


@pytest.mark.slow
def test_each_xdist_worker_grades_once(pytester):
    pytest.importorskip("xdist")
    _folder(pytester, "wrong/structure_all_devices.py")
    result = pytester.runpytest_subprocess("-n", "2", "--junitxml=junit.xml")
    result.assert_outcomes(passed=len(EXERCISE.points) - 1, failed=1)
    assert sum(points for points, _ in _junit_points(pytester.path / "junit.xml").values()) == \
        EXERCISE.max_score - 1


@pytest.mark.slow
def test_a_student_pack_runs_under_plain_pytest(pytester, monkeypatch):
    """The folder ``jaxgrade export student`` writes: ``pytest`` there runs its visible checks
    against its own copy of the exercise (the catalogue's is not needed), with no cache to fill."""
    monkeypatch.delenv("JAXGRADE_CACHE", raising=False)
    pack = export_student(EXERCISE, pytester.path / "pack")
    shutil.copy(RIGHT, pack / f"{SLUG}.py")
    monkeypatch.chdir(pack)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=len(EXERCISE.points))


def test_a_student_pack_under_a_pytest_without_the_plugin_says_so(tmp_path):
    """A pytest that cannot load jaxgrade's plugin (here: plugins from entry points switched off,
    as for a pytest installed without jaxgrade) stops with what to install and run, where it would
    collect nothing and report that no tests ran. The README's install line has pytest in it."""
    pack = export_student(EXERCISE, tmp_path / "pack")
    readme = (pack / "README.md").read_text()
    assert "python -m pip install -c constraints.txt jaxgrade pytest" in readme and "python -m pytest" in readme
    environ = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider"], cwd=pack, capture_output=True,
                          text=True, timeout=120, env={**environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "cannot load jaxgrade's pytest plugin" in done.stderr and "python -m pytest" in done.stderr
    assert "no tests ran" not in done.stdout + done.stderr
