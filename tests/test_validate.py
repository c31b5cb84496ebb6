"""``jaxgrade validate`` over the real catalogue, and on exercises broken on purpose.

The whole catalogue is validated once per test session as ``jaxgrade validate`` does it: the
reference and every right and wrong variant of every exercise, under one seed in the full suite
(``make test``) and under all five (flakiness: a property may fail only for some seeds) in
``make validate``, which sets JAXGRADE_VALIDATE_SEEDS=5. It is the suite's most expensive module,
and worth it: it is the proof that each exercise's checks reject the mistakes they claim to.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.authoring.exercise import all_exercises, load_exercise
from grader.authoring.validate import FULL_MARKS, SEEDS, ExerciseValidation, table, validate

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = ROOT / "exercises"
# How many of the seeds 0..4 the catalogue is validated under (make validate: all five).
CATALOGUE_SEEDS = SEEDS[:int(os.environ.get("JAXGRADE_VALIDATE_SEEDS", "1"))]
NEW = ("mesh_from_devices", "shard_rows", "mesh_2d", "jit_shardings", "sharding_constraint", "shard_map_psum",
       "move_between_shardings")


@pytest.fixture(scope="module")
def catalogue() -> dict[str, ExerciseValidation]:
    results = validate(all_exercises(), seeds=CATALOGUE_SEEDS, workers=2)
    return {r.slug: r for r in results}


@pytest.mark.slow
def test_every_exercise_validates(catalogue: dict[str, ExerciseValidation]) -> None:
    invalid = [slug for slug, r in catalogue.items() if not r.ok]
    assert not invalid, table(list(catalogue.values()))


@pytest.mark.slow
def test_the_reference_is_graded_under_every_seed_asked_for(catalogue: dict[str, ExerciseValidation]) -> None:
    for result in catalogue.values():
        reference = next(v for v in result.variants if v.name == "reference")
        assert sorted(v.job.seed for v in reference.verdicts) == list(CATALOGUE_SEEDS)
        assert reference.expect == FULL_MARKS


@pytest.mark.slow
def test_the_catalogue_holds_the_seven_new_exercises(catalogue: dict[str, ExerciseValidation]) -> None:
    assert set(NEW) <= set(catalogue)


@pytest.mark.slow
@pytest.mark.parametrize("slug", NEW)
def test_two_wrong_variants_get_the_values_right_and_the_structure_wrong(
        catalogue: dict[str, ExerciseValidation], slug: str) -> None:
    """The mistakes a value-only grader would accept are caught by structure checks alone."""
    result = catalogue[slug]
    wrong = [v for v in result.variants if v.name.startswith("wrong/")]
    assert len(wrong) >= 5
    structure_only = [v.name for v in wrong if v.expect == "structure" and v.failed_categories == {"structure"}]
    assert len(structure_only) >= 2, f"{slug}: {[(v.name, v.failed_categories) for v in wrong]}"


def _copy_exercise(tmp_path: Path, slug: str, keep_wrong: tuple[str, ...]) -> Path:
    """A copy of a real exercise under tmp_path/exercises with only some wrong variants."""
    target = tmp_path / "exercises" / slug
    shutil.copytree(EXERCISES / slug, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in (target / "wrong").glob("*.py"):
        if path.name not in keep_wrong:
            path.unlink()
    for path in (target / "right").glob("*.py"):
        path.unlink()
    return target


def _jaxgrade(*args: str, exercises: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAXGRADE_EXERCISES": str(exercises), **(env or {})}
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)


@pytest.mark.slow
def test_a_mislabelled_wrong_variant_and_a_failing_right_one_make_validation_fail(tmp_path: Path) -> None:
    directory = _copy_exercise(tmp_path, "shard_rows", keep_wrong=("value_mean.py", "structure_replicated.py"))
    # A variant that only gets the structure wrong, declared as a value mistake: validation must object.
    text = (directory / "wrong" / "structure_replicated.py").read_text()
    (directory / "wrong" / "value_claims_value.py").write_text(text.replace("# expect: structure", "# expect: value"))
    # A "right" variant that is not right.
    shutil.copy(directory / "wrong" / "value_mean.py", directory / "right" / "not_really_right.py")

    [result] = validate([load_exercise(directory)], seeds=(0,), workers=2)
    assert not result.ok
    by_name = {v.name: v for v in result.variants}
    assert by_name["reference"].ok
    assert by_name["wrong/value_mean.py"].ok
    assert by_name["wrong/structure_replicated.py"].ok
    assert not by_name["wrong/value_claims_value.py"].ok
    assert "declared 'value' but no value check failed" in by_name["wrong/value_claims_value.py"].verdicts[0].problem
    assert not by_name["right/not_really_right.py"].ok
    assert "lost points on value.random_matrices" in by_name["right/not_really_right.py"].verdicts[0].problem
    shown = table([result])
    assert "FAIL" in shown and "Problems:" in shown and "value_claims_value.py" in shown


@pytest.mark.slow
def test_the_command_exits_1_on_an_invalid_exercise_and_0_on_a_valid_one(tmp_path: Path) -> None:
    target = tmp_path / "exercises" / "mesh_from_devices"
    shutil.copytree(EXERCISES / "mesh_from_devices", target, ignore=shutil.ignore_patterns("__pycache__"))
    good = _jaxgrade("validate", "mesh_from_devices", "--seeds", "2", "--variant-seeds", "1",
                     exercises=target.parent)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "reference" in good.stdout and "2/2" in good.stdout and "1/1 exercise(s) valid" in good.stdout
    directory = _copy_exercise(tmp_path / "fewer", "mesh_from_devices", keep_wrong=("value_axis_count.py",))
    short = _jaxgrade("validate", "--seeds", "1", exercises=directory.parent)
    assert short.returncode == 1 and "wrong/ needs at least 6 variants" in short.stdout

    # Make the reference wrong: now it must lose points, and the command must say so.
    reference = directory / "reference.py"
    reference.write_text(reference.read_text().replace("placed * mesh.size", "placed * 8"))
    bad = _jaxgrade("validate", "--seeds", "1", exercises=directory.parent)
    assert bad.returncode == 1
    assert "FAIL" in bad.stdout and "reference (seed 0): lost points on value.random_vectors" in bad.stdout


def test_an_exercise_without_wrong_variants_is_reported_broken(tmp_path: Path) -> None:
    directory = _copy_exercise(tmp_path, "mesh_from_devices", keep_wrong=())
    [result] = validate([load_exercise(directory)], seeds=(0,), workers=1)
    assert not result.ok and "no known-wrong variants" in result.errors[0]
    assert "BROKEN" in table([result])


def test_unknown_slugs_are_usage_errors(tmp_path: Path) -> None:
    run = _jaxgrade("validate", "no_such_exercise", exercises=EXERCISES)
    assert run.returncode == 2 and "unknown exercise 'no_such_exercise'" in run.stderr


def test_list_prints_slug_title_version_points_devices_and_key() -> None:
    run = _jaxgrade("list", exercises=EXERCISES)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].split() == ["slug", "title", "version", "points", "devices", "key"]
    for exercise in all_exercises():
        line = next(line for line in lines if line.startswith(exercise.slug + " "))
        assert exercise.title in line
        assert line.split()[-4:] == [str(exercise.version), f"{exercise.max_score:g}", str(exercise.devices), "present"]


@pytest.mark.slow
def test_validating_again_regrades_only_what_changed(tmp_path: Path) -> None:
    directory = tmp_path / "exercises" / "sgd_step"
    shutil.copytree(EXERCISES / "sgd_step", directory, ignore=shutil.ignore_patterns("__pycache__"))
    cache = {"JAXGRADE_CACHE": str(tmp_path / "cache")}

    def again(*flags: str) -> str:
        run = _jaxgrade("validate", "sgd_step", "--seeds", "1", *flags, exercises=directory.parent, env=cache)
        assert run.returncode == 0, run.stdout + run.stderr
        return run.stderr

    first = again()
    assert "gradings unchanged" not in first
    gradings = 1 + len(list((directory / "right").glob("*.py"))) + len(list((directory / "wrong").glob("*.py")))
    assert f"{gradings} of {gradings} gradings unchanged since an earlier run" in again()
    variant = directory / "wrong" / "value_ascent.py"
    variant.write_text(variant.read_text() + "\n# edited\n")
    assert f"{gradings - 1} of {gradings} gradings unchanged" in again()  # only the edited variant graded
    checks = directory / "checks.py"
    checks.write_text(checks.read_text() + "\n# edited\n")
    assert "gradings unchanged" not in again()  # the checks changed: everything graded again
    assert "gradings unchanged" not in again("--fresh")


@pytest.mark.slow
def test_a_failure_every_seed_would_see_settles_a_wrong_variants_later_seeds(tmp_path: Path) -> None:
    """A wrong variant that fails a check of its category judged once (CompilesAtMost: the same
    calls under every seed), or one that fails it again on what every seed observes alike (a
    host gradient in the probe call), is graded under its first seed only, the later verdicts
    marked settled; one whose failing check depends on the drawn inputs, and every full-marks
    variant, is graded under every seed."""
    directory = _copy_exercise(tmp_path, "no_recompile", keep_wrong=("structure_static_lr.py",
                                                                     "structure_host_gradient.py",
                                                                     "value_sum_not_mean.py"))
    [result] = validate([load_exercise(directory)], seeds=(0, 1, 2), workers=2)
    by_name = {v.name: v for v in result.variants}
    for name in ("wrong/structure_static_lr.py", "wrong/structure_host_gradient.py"):
        settled = by_name[name]
        assert settled.ok and [v.job.seed for v in settled.verdicts] == [0, 1, 2], name
        assert [v.settled for v in settled.verdicts] == [False, True, True], name
        assert "structure" in settled.failed_categories and all(v.duration_s == 0.0 for v in settled.verdicts[1:])
    for name in ("reference", "wrong/value_sum_not_mean.py"):
        assert by_name[name].ok and len(by_name[name].verdicts) == 3, name
        assert not any(v.settled for v in by_name[name].verdicts), name
    shown = table([result])
    assert "3/3*" in shown and "graded under its first seed only" in shown


# Loops forever on every input but the seed exercise's probe: its time-outs come only on drawn
# inputs (and the fixed cases), so they may depend on the seed.
LOOPS_ON_DRAWN_INPUTS = '''# expect: limits
"""Honest on the probe only; never returns on any other input."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    if np.asarray(x).tolist() != [2.0, -1.0, 4.0, 0.5, -3.25, 7.0, 1.5]:
        while True:
            pass
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())))
'''


@pytest.mark.slow
def test_a_limit_met_before_any_drawn_input_settles_a_wrong_variants_later_seeds(tmp_path: Path) -> None:
    """limits_infinite_loop.py runs out of time on the probe, before its grading draws any input
    from the seed: that failure is part of every seed's grading, so the variant is graded under
    its first seed only, as is one that places nothing on the probe. A variant that runs out of
    time only on drawn inputs, and one honest only at the probe's shape (caught on a drawn input
    of another shape), are graded under every seed."""
    directory = _copy_exercise(tmp_path, "named_sharding_replicated",
                               keep_wrong=("limits_infinite_loop.py", "structure_no_placement.py",
                                           "structure_honest_only_at_probe_shape.py"))
    toml = directory / "exercise.toml"
    toml.write_text(toml.read_text().replace("call_s = 5 ", "call_s = 1 "))
    (directory / "wrong" / "limits_loops_on_drawn_inputs.py").write_text(LOOPS_ON_DRAWN_INPUTS)
    [result] = validate([load_exercise(directory)], seeds=(0, 1, 2), workers=2)
    assert all(v.ok for v in result.variants), table([result])  # (a copy cut short of the catalogue's rules)
    by_name = {v.name: v for v in result.variants}
    loop = by_name["wrong/limits_infinite_loop.py"]
    assert [v.settled for v in loop.verdicts] == [False, True, True]
    assert all(v.duration_s == 0.0 for v in loop.verdicts[1:]) and "limits" in loop.failed_categories
    assert [v.settled for v in by_name["wrong/structure_no_placement.py"].verdicts] == [False, True, True]
    drawn = by_name["wrong/limits_loops_on_drawn_inputs.py"]
    assert len(drawn.verdicts) == 3 and not any(v.settled for v in drawn.verdicts)
    assert all("limits" in v.failed_categories and v.duration_s > 1.0 for v in drawn.verdicts)
    honest = by_name["wrong/structure_honest_only_at_probe_shape.py"]
    assert not any(v.settled for v in honest.verdicts)
    assert all("structure" in v.failed_categories for v in honest.verdicts)
    assert "3/3*" in table([result])


@pytest.mark.slow
def test_a_long_variant_hands_half_of_its_later_seeds_to_another_child(tmp_path: Path, monkeypatch) -> None:
    """A variant whose first seed took HAND_OFF_AFTER_S or more grades half of its later seeds
    in another child, beside it; every seed still gets exactly one verdict, the same as graded
    in one child. (The threshold is lowered so the quick reference and variants hand off.)"""
    import grader.authoring.validate as validation

    directory = _copy_exercise(tmp_path, "named_sharding_replicated",
                               keep_wrong=("structure_honest_only_at_probe_shape.py", "value_mean.py"))
    exercise = load_exercise(directory)
    [together] = validate([exercise], seeds=(0, 1, 2, 3), workers=2)
    monkeypatch.setattr(validation, "HAND_OFF_AFTER_S", 0.0)
    handed: list[tuple[str, int]] = []
    run_jobs = validation.run_jobs

    def watched(jobs, *args, **kwargs):  # the real run_jobs, noting which seeds another child got
        verdicts = run_jobs(jobs, *args, **kwargs)
        if jobs[0].seed != 0:
            handed.extend((j.name, j.seed) for j in jobs)
        return verdicts
    monkeypatch.setattr(validation, "run_jobs", watched)
    [apart] = validate([exercise], seeds=(0, 1, 2, 3), workers=2)
    assert ("reference", 2) in handed and ("reference", 3) in handed and ("reference", 1) not in handed
    for one, other in zip(together.variants, apart.variants):
        assert one.name == other.name and one.ok and other.ok, (one, other)
        assert [v.job.seed for v in other.verdicts] == [0, 1, 2, 3]
        assert [(v.score, v.failed_categories, v.settled) for v in one.verdicts] == \
            [(v.score, v.failed_categories, v.settled) for v in other.verdicts]
