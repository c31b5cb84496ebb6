"""Submissions that tamper with what the grader observes (issue #12, d1-d6), graded through the
real engine, each next to an honest control that must keep full marks.

Every tampering file in tests/hostile/ does something the task forbids (places x on the wrong
devices, sums the unplaced x, skips the asked-for sharding on most inputs) and then tries to
hide it: it rewrites its own Mesh after placing (d1), swaps builtins during its own call (d2),
removes the grader's observers at the start of each call or from a timer signal (d3), places
x only while being traced (d4), is untraceable while re-homing a result computed from the
unplaced x (d5), or behaves correctly only for the probe's shape (d6). Each test asserts the
verdict (no full marks, a structure check failed, no check reporting a grader error) *and*
that the message says what really happened.

Cases the grader does not handle yet are strict xfails whose reason says what goes wrong: when
the grader is fixed they XPASS, and the marker must go. Rewriting the recorder's events found
through gc cannot be caught from inside the submission's process in general; the forgery here
is caught by the witness (the account built from the forged events returns the sum on another
layout than the array the call returned).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import SEED_EXERCISE
from grader import find_exercise, grade
from grader.report.result import Report

HOSTILE = Path(__file__).resolve().parent / "hostile"
SEED = SEED_EXERCISE.name
_GRADED: dict[tuple[str, str], Report] = {}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade a file of tests/hostile/ (copied into a class folder, as a student's file) once per
    module, for ``slug``; later tests on the same file reuse the report."""
    folder = tmp_path_factory.mktemp("class")

    def run(name: str, slug: str = SEED) -> Report:
        key = (name, slug)
        if key not in _GRADED:
            submission = folder / name
            shutil.copyfile(HOSTILE / name, submission)
            _GRADED[key] = grade(find_exercise(slug), submission)
        return _GRADED[key]

    yield run
    _GRADED.clear()


def check(report: Report, check_id: str):
    return next(c for c in report.checks if c.id == check_id)


def summary(report: Report) -> list[tuple[str, str, str]]:
    return [(c.id, c.status, c.message[:300]) for c in report.checks]


def assert_fails_structure(report: Report, check_id: str, says: str) -> None:
    """No full marks; ``check_id`` (a structure check) failed saying ``says``; nothing blamed on
    the grader (a grader error tells the student "this is not your fault", which is false here)."""
    assert report.score < report.max_score, summary(report)
    assert not [c for c in report.checks if c.status == "error"], summary(report)
    found = check(report, check_id)
    assert found.category == "structure" and found.status == "failed", summary(report)
    assert says in found.message, found.message


def assert_full_marks(report: Report) -> None:
    assert report.score == report.max_score, [s for s in summary(report) if s[1] != "passed"]


# -- d1: rewriting its own Mesh (or the NamedSharding's mesh) after placing -----------------------
@pytest.mark.parametrize("name", ["rewrite_mesh_attributes.py", "rewrite_sharding_mesh.py"])
def test_rewriting_the_mesh_after_placing_gets_no_full_marks(graded, name):
    report = graded(name)
    assert report.score < report.max_score, summary(report)
    assert check(report, "structure.mesh").status != "passed", summary(report)


@pytest.mark.parametrize("name, held_on", [("rewrite_mesh_attributes.py", "cpu:7"),
                                           ("rewrite_sharding_mesh.py", "cpu:7")])
def test_rewriting_the_mesh_fails_structure_saying_where_the_data_really_is(graded, name, held_on):
    report = graded(name)
    assert_fails_structure(report, "structure.placed", "the data JAX holds on")
    assert held_on in check(report, "structure.placed").message


def test_reading_mesh_attributes_and_rebinding_the_name_keeps_full_marks(graded):
    assert_full_marks(graded("honest_reads_mesh_attributes.py"))


# -- d2: swapping builtins during its own call ------------------------------------------------------
def test_swapping_builtins_during_the_call_cannot_link_the_sum_to_the_placed_array(graded):
    report = graded("swap_builtins_in_call.py")
    assert check(report, "value.random_vectors").status == "passed"  # the number is right ...
    assert check(report, "structure.placed").status == "passed"  # ... and x really was placed, correctly ...
    assert_fails_structure(report, "structure.sum_of_placed",  # ... but the sum is of the unplaced x
                           "not computed from what jax.device_put returned for x")


def test_swapping_a_builtin_during_the_call_and_restoring_it_keeps_full_marks(graded):
    assert_full_marks(graded("honest_swaps_builtin_in_call.py"))


# -- d3: removing the observers -------------------------------------------------------------------
# The observers found missing when the call ends (Returned.intact): nothing of the call can be seen
TAMPERED = "observers of JAX were removed or replaced while your function ran"


def test_removing_the_observers_at_the_start_of_each_call_fails_structure(graded):
    assert_fails_structure(graded("remove_observers_in_call.py"), "structure.placed", TAMPERED)


def test_removing_the_observers_from_a_timer_signal_fails_structure(graded):
    report = graded("remove_observers_from_timer.py")
    message = check(report, "structure.placed").message
    # Whether the timer fired during the probe call is up to the scheduler: either the removal was
    # seen, or the placement on all 8 devices was (and then the mesh check says so).
    if TAMPERED in message:
        assert_fails_structure(report, "structure.placed", TAMPERED)
    else:
        assert_fails_structure(report, "structure.mesh", "Your mesh holds 8 devices")


def test_removing_the_observers_and_putting_them_back_gets_no_full_marks(graded):
    report = graded("remove_observers_put_back.py")
    assert report.score < report.max_score, summary(report)
    assert check(report, "structure.placed").status == "failed", summary(report)


def test_removing_the_observers_and_putting_them_back_is_not_told_that_nothing_was_placed(graded):
    report = graded("remove_observers_put_back.py")
    message = check(report, "structure.placed").message
    assert report.score < report.max_score
    assert "No jax.device_put of x happened" not in message, message


@pytest.mark.slow
def test_clearing_caches_and_reading_jax_internals_keeps_full_marks(graded):
    assert_full_marks(graded("honest_clears_caches_in_call.py"))


@pytest.mark.slow
def test_a_timeout_guard_on_sigalrm_keeps_full_marks(graded):
    assert_full_marks(graded("honest_timer_guard.py"))


# -- d4: placing x only while being traced, jit out_shardings in the real call -----------------------
@pytest.mark.slow
def test_placing_only_when_traced_and_rehoming_with_jit_fails_structure(graded):
    report = graded("trace_only_placement_jit.py")
    assert_fails_structure(report, "structure.placed", "places values differently when traced")
    message = check(report, "structure.placed").message
    assert "only when traced, it placed x itself by jax.device_put" in message
    assert "only when called, it placed a value computed from x by the out_shardings of jax.jit" in message


@pytest.mark.slow
def test_asking_whether_x_is_a_tracer_only_to_print_keeps_full_marks(graded):
    assert_full_marks(graded("honest_traced_branch.py"))


# -- d5: untraceable, the result re-homed with jit out_shardings from the unplaced x ----------------
@pytest.mark.slow
def test_untraceable_rehoming_of_a_sum_of_the_unplaced_x_fails_structure(graded):
    report = graded("untraceable_rehome.py")
    assert check(report, "value.random_vectors").status == "passed"
    assert_fails_structure(report, "structure.sum_of_placed", "not computed from what jax.device_put returned for x")
    noted = " ".join(c.advisory or "" for c in report.checks)
    assert "could not trace your function" in noted and "judged from what the call really did" in noted


@pytest.mark.slow
def test_untraceable_jit_out_shardings_on_the_placed_array_keeps_full_marks(graded):
    assert_full_marks(graded("honest_untraceable_jit_out.py"))


# -- d6: correct only for the probe's shape -----------------------------------------------------------
@pytest.mark.slow
def test_placing_correctly_only_for_the_probe_length_fails_structure(graded):
    assert_fails_structure(graded("probe_shape_only.py"), "structure.placed",
                           "placed its arguments differently on other inputs")


@pytest.mark.parametrize("name, slug", [("jit_shardings_probe_shape_only.py", "jit_shardings"),
                                        ("shard_map_psum_probe_shape_only.py", "shard_map_psum")])
@pytest.mark.slow
def test_using_the_asked_for_transformation_only_for_the_probe_shape_fails_structure(graded, name, slug):
    report = graded(name, slug)
    assert report.score < report.max_score, summary(report)
    assert not [c for c in report.checks if c.status == "error"], summary(report)
    assert any(c.category == "structure" and c.status == "failed" for c in report.checks), summary(report)


@pytest.mark.parametrize("name, slug", [("honest_per_shape_cache.py", SEED),
                                        ("jit_shardings_honest_per_shape.py", "jit_shardings"),
                                        ("shard_map_psum_honest_per_shape.py", "shard_map_psum")])
@pytest.mark.slow
def test_code_that_depends_on_the_shape_but_places_alike_keeps_full_marks(graded, name, slug):
    assert_full_marks(graded(name, slug))


# -- an ahead-of-time executable whose call runs another program (issue #64) -------------------------
@pytest.mark.parametrize("name, slug, swap, check_id, says", [
    ("tensor_parallel_mlp_swaps_call.py", "tensor_parallel_mlp", "unsafe_call", "structure.compiled_all_reduce",
     "XLA compiled your function into an all-gather"),
    ("tensor_parallel_mlp_swaps_call.py", "tensor_parallel_mlp", "jitted_program", "structure.shard_map",
     "not computed by any JAX operation the grader saw"),
    ("jit_shardings_swaps_call.py", "jit_shardings", "unsafe_call", "structure.in_spec",
     "x is placed with PartitionSpec()"),
    ("jit_shardings_swaps_call.py", "jit_shardings", "executable_and_call", "structure.in_spec",
     "x is placed with PartitionSpec()"),
    ("jit_shardings_swaps_call.py", "jit_shardings", "wrapped", "structure.in_spec", "x is placed with PartitionSpec()"),
    ("tensor_parallel_mlp_swaps_call.py", "tensor_parallel_mlp", "both", "structure.compiled_all_reduce",
     "XLA compiled your function into an all-gather"),
    ("tensor_parallel_mlp_swaps_call.py", "tensor_parallel_mlp", "jit_call", "structure.compiled_all_reduce",
     "run no collective"),
    ("tensor_parallel_mlp_swaps_call.py", "tensor_parallel_mlp", "jit_both", "structure.compiled_all_reduce",
     "run no collective"),
    ("jit_shardings_swaps_call.py", "jit_shardings", "jit_call", "structure.in_spec",
     "not computed by any JAX operation the grader saw"),
])
@pytest.mark.slow
def test_a_compiled_executable_whose_call_runs_another_program_is_judged_by_what_ran(tmp_path, name, slug, swap,
                                                                                      check_id, says):
    """The recorder sees which XLA program made a compiled executable's outputs: one compiled ahead
    of time here is recorded as what the call did (its program, its shardings), anything else
    ties the call to no program (19/19 and 12/12 before, the account naming the program lowered),
    whether the executable was called ahead of time or by a plain jitted call, and whether the
    program asked for ran too or not."""
    submission = tmp_path / name
    submission.write_text((HOSTILE / name).read_text().replace('SWAP = "unsafe_call"', f"SWAP = {swap!r}"))
    assert_fails_structure(grade(find_exercise(slug), submission), check_id, says)


@pytest.mark.parametrize("name, slug", [("tensor_parallel_mlp_honest_compiled_ahead.py", "tensor_parallel_mlp"),
                                        ("tensor_parallel_mlp_honest_inspects_compiled.py", "tensor_parallel_mlp"),
                                        ("jit_shardings_honest_compiled_donated.py", "jit_shardings"),
                                        ("jit_shardings_honest_compiled_reused.py", "jit_shardings")])
@pytest.mark.slow
def test_a_program_compiled_ahead_of_time_and_called_keeps_full_marks(graded, name, slug):
    assert_full_marks(graded(name, slug))


# -- beyond d1-d6: deliberate in-process forgery ------------------------------------------------------
@pytest.mark.slow
def test_forging_the_recorded_events_through_gc_gets_no_full_marks(graded):
    """The forged events show the decoy placement on one device feeding the sum, and the account
    is built from them: the witness runs it and returns the sum on that one device, where the
    array the call really returned lives on all eight, so the call diverges. (The counterfactual
    calls caught it before the witness confirmed layouts: the sum does not follow the decoy.)"""
    report = graded("forge_recorded_events.py")
    assert_fails_structure(report, "structure.sum_of_placed", "What your code reported is not what it computed")
    assert "result is returned on" in check(report, "structure.sum_of_placed").message


@pytest.mark.slow
def test_walking_the_garbage_collector_without_touching_anything_keeps_full_marks(graded):
    assert_full_marks(graded("honest_gc_collect.py"))


# -- d7: changing the machinery the child observes JAX with (#40 point 3, #55 point 7) -----------------
# The witness re-derives the value, the placements, the returned layouts and the compiled facts the
# structure checks rest on, in a process of its own: a patch to JAX, jaxlib or the standard library
# that forges none of them costs nothing (the in-process watch that failed every structure check for
# one is gone), and a wrong answer beside a patch fails for what the code does.
@pytest.mark.parametrize("name", ["wraps_executable_method.py", "adds_method_in_call.py", "renames_primitive.py",
                                  "patches_executable_in_call.py"])
def test_a_patch_that_forges_nothing_the_witness_re_derives_keeps_full_marks(graded, name):
    assert_full_marks(graded(name))


def test_a_patch_beside_a_wrong_answer_fails_for_what_the_code_does(graded):
    assert_fails_structure(graded("wraps_re_match.py"), "structure.placed", "No jax.device_put of x happened")


def test_configuring_through_public_apis_keeps_full_marks(graded):
    assert_full_marks(graded("honest_configures.py"))


def test_a_withheld_checks_input_reaches_no_text_a_student_is_shown(hidden_exercise, tmp_path):
    from grader.report.render import render
    submission = tmp_path / "leaks_withheld_input.py"
    shutil.copyfile(HOSTILE / "leaks_withheld_input.py", submission)
    report = grade(hidden_exercise, submission)
    assert check(report, "value.special_inputs").status == "failed"  # it did raise on the withheld inputs ...
    assert check(report, "limits.resources").status == "failed"  # ... as RecursionError: an incident
    for format in ("text", "md", "json", "html"):
        shown = render(report, format, audience="student")
        assert "LEAKED" not in shown and "[inf" not in shown and "3e+38" not in shown, (format, shown)
    # the instructor sees what happened, in the withheld check's own message
    assert "recursed too deeply" in check(report, "value.special_inputs").message


# -- d8: telling the counterfactual call from an ordinary one (#40 point 4) --------------------------
# The feeding call hands the placement other values, so a function that compares its placed copy
# with its argument can tell that call apart and be honest only there. The probe call's own
# operations are also run again (grader.child.replay): nothing of the submission runs, so nothing
# can tell. (A correct solution that asserts its placed copy kept the values still fails the
# feeding call: the replay is a witness that can only fail, as a forged record could fool it.)
@pytest.mark.parametrize("slug, check_ids", [
    ("named_sharding_replicated", ["structure.sum_of_placed"]),
    ("sharded_matmul", ["structure.product_of_placed_x", "structure.product_of_placed_w"]),
    ("data_parallel_train_step", ["structure.step_from_placed_batch"]),
])
def test_comparing_the_placed_copy_with_the_argument_cannot_pass_the_dataflow_check(slug, check_ids):
    exercise = find_exercise(slug)
    report = grade(exercise, exercise.directory / "wrong" / "structure_compares_placed_with_original.py")
    for check_id in check_ids:
        assert_fails_structure(report, check_id, "run again with the placed")


# An arithmetic choice needs no boolean: a weight exp(-1e30 * distance) is 1 in an ordinary call and
# 0 in any replay with other values, and an integer index (argmax, a cast) picks alike. The replay
# also follows each such leaf to first order at the call's own values (a jvp of the same replay),
# where every comparison comes out as in the call and a blend moves only with the branch it took.
@pytest.mark.parametrize("slug, variant, check_id", [
    ("named_sharding_replicated", "structure_soft_select_on_difference.py", "structure.sum_of_placed"),
    ("sharded_matmul", "structure_argmax_picks_original.py", "structure.product_of_placed_x"),
    ("data_parallel_train_step", "structure_soft_select_inside_jit.py", "structure.step_from_placed_batch"),
    ("data_parallel_train_step", "structure_blend_eager.py", "structure.step_from_placed_batch"),
])
def test_choosing_the_original_by_arithmetic_cannot_pass_the_dataflow_check(slug, variant, check_id):
    exercise = find_exercise(slug)
    report = grade(exercise, exercise.directory / "wrong" / variant)
    assert_fails_structure(report, check_id, "moved by an infinitesimal step")


@pytest.mark.parametrize("slug, variant", [
    ("named_sharding_replicated", "stop_gradient_sum.py"),
    ("sharded_matmul", "tensordot_highest.py"),
])
def test_a_result_of_the_placed_array_through_stop_gradient_or_a_precision_keeps_full_marks(slug, variant):
    exercise = find_exercise(slug)
    assert_full_marks(grade(exercise, exercise.directory / "right" / variant))
