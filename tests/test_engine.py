"""grader.engine.grade on the seed exercise: the reference, other right solutions and every
known-wrong variant, through the public API, with real child processes and real JAX."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SEED_EXERCISE
from grader import grade
from grader.authoring.exercise import EXPECT
from grader.report.render import render

WRONG = sorted((SEED_EXERCISE / "wrong").glob("*.py"))
RIGHT = sorted((SEED_EXERCISE / "right").glob("*.py"))


def declared(path: Path) -> str:
    return EXPECT.search(path.read_text()).group(1)


def test_reference_gets_full_marks(seed_exercise):
    report = grade(seed_exercise, seed_exercise.reference)
    assert report.status == "passed", [c for c in report.checks if c.status != "passed"]
    assert report.score == report.max_score == 10.0
    assert {c.category for c in report.checks} == {"load", "type", "value", "structure", "limits"}


@pytest.mark.slow
@pytest.mark.parametrize("path", RIGHT, ids=lambda p: p.stem)
def test_other_correct_solutions_get_full_marks(seed_exercise, path):
    report = grade(seed_exercise, path)
    assert report.status == "passed", [(c.id, c.message) for c in report.checks if c.status != "passed"]


@pytest.mark.slow
def test_spec_none_is_accepted_with_an_advisory(seed_exercise):
    report = grade(seed_exercise, SEED_EXERCISE / "right" / "spec_none.py")
    spec = next(c for c in report.checks if c.id == "structure.spec")
    assert spec.status == "passed" and "PartitionSpec(None)" in spec.advisory


@pytest.mark.slow
@pytest.mark.parametrize("path", WRONG, ids=lambda p: p.stem)
def test_wrong_variant_fails_its_declared_category(seed_exercise, path):
    report = grade(seed_exercise, path)
    category = declared(path)
    failed = [c for c in report.checks if c.category == category and c.status == "failed"]
    assert failed, f"{path.name} should fail a {category} check: {[(c.id, c.status) for c in report.checks]}"
    assert report.score < report.max_score and report.status == "failed"
    for check in failed:
        assert check.message and check.score == 0.0


@pytest.mark.slow
def test_a_file_that_cannot_load_skips_every_other_check(seed_exercise):
    report = grade(seed_exercise, SEED_EXERCISE / "wrong" / "load_syntax_error.py")
    assert [c.status for c in report.checks] == ["failed"] + ["skipped"] * (len(report.checks) - 1)
    assert all(c.score == 0 for c in report.checks)
    assert "line 9" in report.checks[0].message


@pytest.mark.slow
def test_no_placement_gets_the_right_number_and_fails_structure(seed_exercise):
    """The case value-only graders cannot see: `return jnp.sum(x)`."""
    report = grade(seed_exercise, SEED_EXERCISE / "wrong" / "structure_no_placement.py")
    by_category = {c.id: c.status for c in report.checks}
    assert by_category["value.random_vectors"] == by_category["value.special_inputs"] == "passed"
    assert by_category["structure.placed"] == "failed"
    placed = next(c for c in report.checks if c.id == "structure.placed")
    assert "no jax.device_put of x" in placed.message.lower()


@pytest.mark.slow
def test_mesh_over_all_devices_names_the_devices(seed_exercise):
    report = grade(seed_exercise, SEED_EXERCISE / "wrong" / "structure_all_devices.py")
    mesh = next(c for c in report.checks if c.id == "structure.mesh")
    assert mesh.status == "failed"
    assert "8 devices: cpu:0 … cpu:7" in mesh.message and "jax.devices()[:1]" in mesh.message


@pytest.mark.slow
def test_value_failure_shows_a_shrunk_counterexample_and_the_seed(seed_exercise):
    report = grade(seed_exercise, SEED_EXERCISE / "wrong" / "value_skips_first.py", seed=3)
    check = next(c for c in report.checks if c.id == "value.random_vectors")
    assert check.status == "failed"
    # Hypothesis shrinks to one element: the smallest input where dropping x[0] matters.
    assert check.counterexample.startswith("x = jnp.array([") and check.counterexample.count(",") == 1
    assert "seed 3" in check.message and check.reproduce


@pytest.mark.slow
def test_time_limit_is_reported_in_limits(seed_exercise):
    from grader import Limits
    report = grade(seed_exercise, SEED_EXERCISE / "wrong" / "limits_infinite_loop.py",
                   limits=Limits(call_s=1.0, total_s=20))
    limits = next(c for c in report.checks if c.category == "limits")
    assert limits.status == "failed" and "time limit" in limits.message and "1 s" in limits.message
    assert report.duration_s < 15


@pytest.mark.slow
def test_same_seed_same_json(seed_exercise):
    path = SEED_EXERCISE / "wrong" / "value_mean.py"
    first, second = (json.loads(render(grade(seed_exercise, path, seed=5), "json")) for _ in range(2))
    first.pop("duration_s"), second.pop("duration_s")
    assert first == second


@pytest.mark.slow
def test_json_has_the_documented_shape(seed_exercise):
    data = json.loads(render(grade(seed_exercise, SEED_EXERCISE / "wrong" / "structure_sharded_spec.py"), "json"))
    assert set(data) == {"schema", "exercise", "score", "max_score", "status", "checks", "submission",
                         "environment", "duration_s"}
    assert data["schema"] == "jaxgrade.report/1" and data["status"] == "failed"
    assert set(data["submission"]) == {"path", "sha256"} and len(data["submission"]["sha256"]) == 64
    assert {"jaxgrade", "jax", "devices", "seed"} <= set(data["environment"])
    assert data["environment"]["devices"] == 8 and data["environment"]["jax"] == "0.10.2"
    for check in data["checks"]:
        assert set(check) == {"id", "title", "category", "status", "score", "max_score", "message", "hint",
                              "counterexample", "expected", "observed", "advisory", "expected_layout",
                              "observed_layout"}
    assert data["score"] == sum(c["score"] for c in data["checks"])


def test_missing_file_is_a_load_failure_not_a_crash(seed_exercise, tmp_path):
    # the engine grades a file it is handed (the public grader.grade refuses a missing one, as the CLI does)
    from grader.engine import grade as grade_file
    report = grade_file(seed_exercise, tmp_path / "nowhere.py")
    assert report.checks[0].status == "failed" and report.submission["sha256"] is None


def test_a_checks_time_budget_grows_with_what_the_reference_needed(tmp_path):
    """check_s is the floor; a check the reference itself needs long for gets 20 times that."""
    import json
    import shutil

    from grader.cache import warmed_marker
    from grader.engine import REFERENCE_FACTOR, check_budgets
    from grader.authoring.exercise import load_exercise

    directory = tmp_path / "named_sharding_replicated"
    shutil.copytree(SEED_EXERCISE, directory)
    (directory / "statement.md").write_text((directory / "statement.md").read_text() + "\n")  # another fingerprint
    exercise = load_exercise(directory)
    marker = warmed_marker(exercise.slug, exercise.fingerprint)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"value.random_vectors": 3.2, "load.function": 0.01}))
    budgets = check_budgets(exercise)
    assert budgets["value.random_vectors"] == REFERENCE_FACTOR * 3.2 == 64.0
    assert budgets["load.function"] == exercise.limits.check_s


@pytest.mark.slow
def test_every_reproduce_command_is_valid_python(seed_exercise):
    """Whatever the input's size: small inputs written out, large ones as compressed bytes or
    as the expression that built them."""
    import ast
    import shlex

    from grader.authoring.exercise import find_exercise

    reports = [grade(seed_exercise, SEED_EXERCISE / "wrong" / "value_counts_every_copy.py"),
               grade(find_exercise("sharded_matmul"),
                     SEED_EXERCISE.parent / "sharded_matmul" / "wrong" / "value_divides_by_devices.py")]
    commands = [c.reproduce for report in reports for c in report.checks if c.reproduce]
    assert len(commands) >= 3
    for command in commands:
        [code] = [word for word in shlex.split(command) if word.startswith("import ")]
        ast.parse(code)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["reference.py", "wrong/structure_static_lr.py", "wrong/value_ascent.py",
                                     "right/jit_applied_each_call.py"])
def test_grading_under_several_seeds_in_one_child_gives_each_seeds_own_report(variant):
    """grade_seeds imports the file once; each seed's report is the one grade() gives alone:
    the same verdicts, and the same words but for a check judged once (a compile count judged
    in a child that compiled it all before would say "none"; judged first, its verdict holds,
    and which earlier trace it blames for a recompilation depends on what ran before it)."""
    from grader import find_exercise
    from grader.engine import grade_seeds

    exercise = find_exercise("sgd_step")
    once = {c.id for c in exercise.checks if c.judged_once}
    assert once == {"structure.compiles_once"}
    path = exercise.directory / variant
    together = grade_seeds(exercise, path, (0, 3), compile_cache=False)
    for seed, report in zip((0, 3), together):
        alone = grade(exercise, path, seed=seed, compile_cache=False)
        assert report.environment["seed"] == seed
        assert [(c.id, c.status, c.score) for c in report.checks] == [(c.id, c.status, c.score) for c in alone.checks]
        assert [c.message for c in report.checks if c.id not in once] == \
            [c.message for c in alone.checks if c.id not in once]


@pytest.mark.slow
def test_later_seeds_can_name_their_first_failing_input_unshrunk():
    """Validation needs a verdict, not the smallest counterexample: with shrink_every_seed=False
    the first seed is shrunk as ever, and a later seed fails on the same check with the same
    score, naming one of its drawn inputs as it was drawn (jaxgrade check --seed N shrinks it)."""
    from grader import find_exercise
    from grader.checks.values import ValueProperty, arguments_text
    from grader.engine import grade_seeds

    exercise = find_exercise("sgd_step")
    path = exercise.directory / "wrong" / "value_ascent.py"
    quick = grade_seeds(exercise, path, (0, 3), compile_cache=False, shrink_every_seed=False)
    full = grade_seeds(exercise, path, (0, 3), compile_cache=False)
    for fast, slow in zip(quick, full):
        assert [(c.id, c.status, c.score) for c in fast.checks] == [(c.id, c.status, c.score) for c in slow.checks]
    assert [c.message for c in quick[0].checks] == [c.message for c in full[0].checks]
    values = next(c for c in exercise.checks if isinstance(c, ValueProperty))
    failed = next(c for c in quick[1].checks if c.id == values.id)
    drawn = [arguments_text(a, limit=64) for a in values.draw(3)]
    assert failed.status == "failed" and failed.counterexample in drawn
    shrunk = next(c for c in full[1].checks if c.id == values.id)
    assert shrunk.counterexample != failed.counterexample


@pytest.mark.slow
def test_an_incident_before_any_drawn_input_is_part_of_every_seeds_grading(seed_exercise, tmp_path):
    """Graded under several seeds in one child, a time-out on the probe (a call every seed makes
    alike, whose answer the later seeds reuse) fails the limits check under each seed, with the
    same message, and settles the grading after the first seed; a time-out met only on drawn
    inputs is that seed's own and settles nothing."""
    from grader import Limits
    from grader.engine import grade_seeds

    probe = "[2.0, -1.0, 4.0, 0.5, -3.25, 7.0, 1.5]"
    body = ("import jax, jax.numpy as jnp, numpy as np\n"
            "from jax.sharding import Mesh, NamedSharding, PartitionSpec\n\n"
            "def replicated_sharding_value(x):\n"
            "    if np.asarray(x).tolist() {} " + probe + ":\n"
            "        while True:\n"
            "            pass\n"
            "    mesh = Mesh(np.array(jax.devices()[:1]), ('data',))\n"
            "    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())))\n")
    on_probe, off_probe = tmp_path / "loops_on_the_probe.py", tmp_path / "loops_off_the_probe.py"
    on_probe.write_text(body.format("=="))
    off_probe.write_text(body.format("!="))
    limits = Limits(call_s=1.0, total_s=30)

    def limits_of(report):
        return next(c for c in report.checks if c.category == "limits")

    reports = grade_seeds(seed_exercise, on_probe, (0, 1, 2), limits=limits)
    assert [limits_of(r).status for r in reports] == ["failed"] * 3
    assert len({limits_of(r).message for r in reports}) == 1 and "time limit" in limits_of(reports[0]).message
    assert all(r.duration_s < 1.0 for r in reports[1:])  # the probe's answer is reused: no second time-out
    assert len(grade_seeds(seed_exercise, on_probe, (0, 1, 2), limits=limits, settled_by="limits")) == 1

    reports = grade_seeds(seed_exercise, off_probe, (0, 1), limits=limits, settled_by="limits")
    assert [limits_of(r).status for r in reports] == ["failed"] * 2


@pytest.mark.slow
def test_each_seeds_structure_is_judged_on_that_seeds_own_calls(seed_exercise, tmp_path):
    """Graded under several seeds in one child, a seed's structure checks compare the probe with
    that seed's own calls, not the first seed's: a function that places x on every device only
    when x holds a value one later seed draws (and the first does not) passes under the first
    seed and fails under that one, as it does graded alone."""
    import numpy as np

    from grader.checks.values import ValueProperty
    from grader.engine import grade_seeds

    values = next(c for c in seed_exercise.checks if isinstance(c, ValueProperty))
    first = {float(v) for a in values.draw(0) for v in np.asarray(a["x"]).ravel()}
    seed, value = next((s, float(a["x"][0])) for s in range(1, 5) for a in values.draw(s)
                       if len(a["x"]) > 1 and np.isfinite(a["x"][0]) and float(a["x"][0]) not in first)
    path = tmp_path / "all_devices_on_one_value.py"
    path.write_text("import jax, jax.numpy as jnp, numpy as np\n"
                    "from jax.sharding import Mesh, NamedSharding, PartitionSpec\n\n"
                    "def replicated_sharding_value(x):\n"
                    f"    seen = bool(np.any(np.asarray(x) == np.float32({value!r})))\n"
                    "    mesh = Mesh(np.array(jax.devices() if seen else jax.devices()[:1]), ('data',))\n"
                    "    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())))\n")
    together = grade_seeds(seed_exercise, path, (0, seed))
    assert together[0].status == "passed", [c for c in together[0].checks if c.status != "passed"]
    later = {c.id: c.status for c in together[1].checks}
    assert later["structure.placed"] == "failed", together[1].checks
    alone = grade(seed_exercise, path, seed=seed)
    assert [(c.id, c.status, c.message) for c in together[1].checks] == [(c.id, c.status, c.message)
                                                                         for c in alone.checks]


@pytest.mark.slow
def test_a_later_seed_sees_the_host_round_trips_of_shapes_an_earlier_one_ran():
    """JAX's C++ dispatch would serve a later seed's calls at shapes the first seed ran, and hide
    their NumPy round trips from the recorder: pmean_gradients' variant honest only at the
    probe's shape (NumPy's average plus 0 * the pmean elsewhere) fails under a later seed graded
    in the same child as it does alone."""
    from grader import find_exercise
    from grader.engine import grade_seeds

    exercise = find_exercise("pmean_gradients")
    path = exercise.directory / "wrong" / "structure_honest_only_at_probe_shape.py"
    together = grade_seeds(exercise, path, (0, 1))
    alone = grade(exercise, path, seed=1)
    assert [(c.id, c.status) for c in together[1].checks] == [(c.id, c.status) for c in alone.checks]
    assert any(c.category == "structure" and c.status == "failed" for c in together[1].checks)
