"""The witness (grader/witness/, grader/child/account.py, grader/observe/witnessed.py): the
account a child hands over is run again in a process that runs no submission's code; an
account that does not give what the call returned fails every structure check; an honest one
lets everyday standard-library idioms cost nothing; collectives are counted as XLA runs them.

Real gradings of real files (tests/hostile/, the catalogue's variants, idioms written here)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import numpy as np
from conftest import SEED_EXERCISE

from grader import find_exercise, grade
from grader.observe.returned import Leaf
from grader.observe.witnessed import witnessed
from grader.wire import encode_array

HOSTILE = Path(__file__).resolve().parent / "hostile"
EXERCISES = Path(__file__).resolve().parent.parent / "exercises"
STRUCTURE = ("structure.placed", "structure.mesh", "structure.spec", "structure.sum_of_placed")


def _leaf(values: list[float]) -> Leaf:
    array = np.asarray(values, np.float32)
    return Leaf("result", "jax_array", "jaxlib._jax.ArrayImpl", "float32", array.shape, array)


# -- the verdict on an answer, as data ------------------------------------------------------------
def test_an_account_that_computes_the_returned_value_is_reproduced() -> None:
    answer = {"ok": True, "outputs": [encode_array(np.asarray([1.5, 2.0], np.float32))], "programs": [],
              "breaks": []}
    assert witnessed(answer, (_leaf([1.5, 2.0]),)).status == "reproduced"


def test_an_account_that_computes_something_else_diverges_naming_the_leaf() -> None:
    answer = {"ok": True, "outputs": [encode_array(np.asarray([1.5, 2.5], np.float32))], "programs": [],
              "breaks": []}
    verdict = witnessed(answer, (_leaf([1.5, 2.0]),))
    assert verdict.status == "diverged" and verdict.detail.startswith("result: ")


def test_an_account_the_witness_cannot_run_is_no_verdict_either_way() -> None:
    for answer in ({"ok": False, "unverifiable": "a sharding of type 'GSPMDSharding'"}, None, {"ok": True},
                   {"ok": True, "outputs": "x", "programs": 3}):
        assert witnessed(answer, (_leaf([1.0]),)).status == "unverifiable", answer


def test_the_arrays_an_account_held_are_read_and_a_malformed_list_is_no_verdict() -> None:
    held = {"ref": ["step", 0, 0], "step": 0, "shape": [16, 24], "itemsize": 4, "most": 1536, "devices": 8,
            "beside_arguments": False}
    answer = {"ok": True, "outputs": [encode_array(np.asarray([1.0], np.float32))], "programs": [], "breaks": [],
              "held": [held]}
    verdict = witnessed(answer, (_leaf([1.0]),))
    assert verdict.status == "reproduced" and verdict.held[0].size == 16 * 24 and verdict.held[0].most == 1536
    for bad in ({**held, "most": -1}, {**held, "shape": "16x24"}, {k: v for k, v in held.items() if k != "devices"}):
        assert witnessed({**answer, "held": [bad]}, (_leaf([1.0]),)).status == "unverifiable", bad


def test_where_each_program_took_its_inputs_is_read_and_a_malformed_one_is_no_verdict() -> None:
    where = {"sharding": {"type": "SingleDeviceSharding", "devices": [0]}, "blocks": [[0, [[0, 4]]]]}
    ran = {"step": 1, "inputs": [where, None], "outputs": [where], "manual": None}
    answer = {"ok": True, "outputs": [encode_array(np.asarray([1.0], np.float32))], "programs": [], "breaks": [],
              "ran": [ran]}
    verdict = witnessed(answer, (_leaf([1.0]),))
    assert verdict.status == "reproduced" and verdict.ran[0].step == 1 and verdict.ran[0].inputs[1] is None
    assert verdict.ran[0].inputs[0].blocks == {0: ((0, 4),)} and verdict.ran[0].manual is None
    for bad in ({**ran, "manual": "P('model')"}, {**ran, "step": -1}, {k: v for k, v in ran.items() if k != "inputs"}):
        assert witnessed({**answer, "ran": [bad]}, (_leaf([1.0]),)).status == "unverifiable", bad


# -- real gradings ----------------------------------------------------------------------------------
@pytest.mark.slow
def test_an_account_edited_inside_the_child_fails_every_structure_check(tmp_path: Path) -> None:
    submission = tmp_path / "forges_account.py"
    shutil.copyfile(HOSTILE / "forges_account.py", submission)
    report = grade(find_exercise(SEED_EXERCISE.name), submission)
    found = {c.id: c for c in report.checks}
    for check_id in STRUCTURE:
        assert found[check_id].status == "failed", found[check_id].message
        assert "What your code reported is not what it computed" in found[check_id].message
    assert [c.id for c in report.checks if c.category == "value" and c.status != "passed"] == []
    assert not [c for c in report.checks if c.status == "error"]


@pytest.mark.slow
@pytest.mark.parametrize(("account", "says"), [(False, "x was placed with jax.device_put on"),
                                               (True, "result is returned on")])
def test_a_record_forged_apart_from_what_the_programs_place_fails_every_structure_check(
        tmp_path: Path, account: bool, says: str) -> None:
    """x replicated over all eight devices; the reply rewritten as it is framed so that every
    placement, the returned leaf and its buffers, and the traced program name device 0 alone
    (mesh, spec and placement checks passed so before the witness confirmed placements). With
    the account rewritten too, the witness places x on device 0, and the program it hands over
    still returns on eight."""
    submission = tmp_path / "forges_placements.py"
    submission.write_text((HOSTILE / "forges_placements.py").read_text().replace("ACCOUNT = False",
                                                                                  f"ACCOUNT = {account}"))
    report = grade(find_exercise("named_sharding_replicated"), submission)
    found = {c.id: c for c in report.checks}
    for check_id in STRUCTURE:
        assert found[check_id].status == "failed", found[check_id].message
        assert "What your code reported is not what it computed" in found[check_id].message
        assert says in found[check_id].message and "devices [0, 1, 2, 3, 4, 5, 6, 7]" in found[check_id].message
    assert [c.id for c in report.checks if c.category == "value" and c.status != "passed"] == []


@pytest.mark.slow
@pytest.mark.parametrize(("slug", "says"), [
    ("jit_shardings", "x was placed by the in_shardings of a jax.jit on"),
    ("tensor_parallel_mlp", "w1 was placed by the in_specs of a jax.shard_map on")])
def test_a_record_of_jit_shardings_or_shard_map_specs_forged_apart_from_the_programs_fails_every_structure_check(
        slug: str, says: str) -> None:
    """A wrong variant (x replicated by the jit's in_shardings; w1 entering the shard_map whole)
    whose reply is rewritten as it is framed to name the specs the exercise asks for: every
    structure check passed so before the witness confirmed jit shardings and shard_map specs."""
    report = grade(find_exercise(slug), HOSTILE / "forges_transformed_shardings.py")
    structure = [c for c in report.checks if c.category == "structure"]
    assert structure
    for check in structure:
        assert check.status == "failed", (check.id, check.message)
        assert "What your code reported is not what it computed" in check.message and says in check.message
    assert [c.id for c in report.checks if c.category == "value" and c.status != "passed"] == []


@pytest.mark.slow
def test_a_loop_check_on_a_call_the_witness_cannot_run_fails_saying_why_not_accusing(tmp_path: Path) -> None:
    """grad_accumulation's loop that always runs 64 steps and masks those past k, behind 600
    eager additions of zero: an account longer than the witness takes (more than 512
    operations), and the trip count XLA runs is known only from its run. The loop check passed
    for want of a count; now it fails, naming why and what to change."""
    masked = (EXERCISES / "grad_accumulation" / "wrong" / "structure_masked_fixed_while_loop.py").read_text()
    submission = tmp_path / "unverifiable_masked_loop.py"
    submission.write_text(masked.replace("def accumulated_grad(", "def _masked(") + "\n\ndef accumulated_grad(w, xs, ys):\n"
                          "    for _ in range(600):\n        w = w + 0.0\n    return _masked(w, xs, ys)\n")
    report = grade(find_exercise("grad_accumulation"), submission)
    found = {c.id: c for c in report.checks}
    for check_id in ("structure.step_per_microbatch", "structure.running_sum", "structure.memory"):
        message = found[check_id].message
        assert found[check_id].status == "failed", message
        assert "could not re-derive what your call computed" in message and "more than 512 operations" in message
        assert "says nothing against your code" in message and "not what it computed" not in message
    assert not [c for c in report.checks if c.status == "error"]


_MLP = (EXERCISES / "tensor_parallel_mlp" / "reference.py").read_text()
_HEAD, _, _ = _MLP.partition("def tensor_parallel_mlp")
IDIOMS = {
    "catch_warnings_in_call": "import warnings\n\n\ndef tensor_parallel_mlp(x, w1, w2):\n"
                              "    with warnings.catch_warnings():\n        warnings.simplefilter('ignore')\n"
                              "        return MLP(x, w1, w2)\n",
    "logging_and_redirect": "import contextlib\nimport io\nimport logging\n\nlogging.basicConfig(level=logging.INFO)\n\n\n"
                            "def tensor_parallel_mlp(x, w1, w2):\n    logging.getLogger('jax').setLevel(logging.WARNING)\n"
                            "    with contextlib.redirect_stdout(io.StringIO()):\n        print('calling')\n"
                            "        return MLP(x, w1, w2)\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("idiom", sorted(IDIOMS))
def test_everyday_standard_library_idioms_keep_full_marks(tmp_path: Path, idiom: str) -> None:
    submission = tmp_path / f"{idiom}.py"
    submission.write_text(_HEAD + IDIOMS[idiom])
    report = grade(find_exercise("tensor_parallel_mlp"), submission)
    assert report.score == report.max_score, [(c.id, c.message[:200]) for c in report.checks if c.status != "passed"]


@pytest.mark.slow
@pytest.mark.parametrize(("slug", "variant", "check_id", "says"), [
    ("tensor_parallel_mlp", "structure_psum_in_data_while", "structure.one_psum", "unbounded number of times"),
    ("pipeline_shift", "structure_ppermute_in_data_while", "structure.one_row_moved", "depends on the data"),
    ("reduce_scatter_grads", "structure_scatters_in_data_while", "structure.traffic", "depends on the data"),
])
def test_a_collective_in_a_loop_whose_length_comes_from_data_has_no_bound(slug: str, variant: str, check_id: str,
                                                                          says: str) -> None:
    report = grade(find_exercise(slug), EXERCISES / slug / "wrong" / f"{variant}.py")
    found = next(c for c in report.checks if c.id == check_id)
    assert found.status == "failed" and says in found.message, found.message


# -- an account edited in the child is malformed, never unverifiable -------------------------------
HONEST = {"steps": [{"kind": "place", "sharding": {"type": "default"}, "reads": [["arg", 0]]},
                    {"kind": "program", "program": 0, "reads": [["step", 0, 0], ["literal", 2.0]]},
                    {"kind": "break", "why": "a host callback", "reads": [["step", 1, 0]],
                     "made": [{"array": {"dtype": "<f4", "shape": [], "b64": "AAAAAA=="}, "sharding": {"type": "default"}}]}],
          "programs": [{"b64": "AAAA"}], "constants": [], "outputs": [["step", 2, 0]],
          "kept": [{"shape": [16, 24], "dtype": "float32", "sharding": {"type": "default"}}]}


def test_an_account_as_the_child_writes_it_is_well_formed() -> None:
    from grader.witness.rerun import malformed
    assert malformed(HONEST, 1) is None


@pytest.mark.parametrize("edit", [
    lambda a: a.pop("steps"),
    lambda a: a["steps"].pop(0),  # a step reads what no step made any more
    lambda a: a["steps"][1].update(program=3),
    lambda a: a["steps"][1].update(reads=[["step", 1, 0]]),  # reads itself
    lambda a: a["steps"][0].update(reads=[["arg", 4]]),
    lambda a: a["steps"][0].update(kind="exec"),
    lambda a: a["steps"][2].update(made=["AAAA"]),
    lambda a: a.update(outputs=[["constant", 0]]),
    lambda a: a["programs"].append("AAAA"),
    lambda a: a["steps"][1]["reads"].append(["literal", "x"]),
    lambda a: a.update(kept={"w": [16, 24]}),
    lambda a: a["kept"][0].update(shape=[16, -24]),
    lambda a: a["kept"][0].pop("sharding"),
])
def test_an_account_edited_after_it_was_written_is_malformed(edit) -> None:
    import copy

    from grader.witness.rerun import malformed
    account = copy.deepcopy(HONEST)
    edit(account)
    assert malformed(account, 1) is not None


def test_a_malformed_account_diverges_and_one_the_child_could_not_build_is_no_verdict() -> None:
    leaves = (_leaf([1.0]),)
    assert witnessed({"ok": False, "malformed": "step 1 runs a program the account does not hold"},
                     leaves).status == "diverged"
    assert witnessed({"ok": False, "unverifiable": "the call ran more than 512 operations"}, leaves).status \
        == "unverifiable"


@pytest.mark.slow
def test_a_wrapper_that_edits_the_childs_compiled_facts_changes_nothing_the_witness_read(tmp_path: Path) -> None:
    """A step that gathers w twice; what the child says of the compiled programs is edited (a
    profile hook rewrites the reply as it is framed, the reader's __code__ swapped). The witness
    compiles the programs itself: two all-gathers (18/18 before the witness)."""
    submission = tmp_path / "wrapper_edits_compiled_facts.py"
    shutil.copyfile(HOSTILE / "wrapper_edits_compiled_facts.py", submission)
    report = grade(find_exercise("fsdp_gather_params"), submission)
    found = {c.id: c for c in report.checks}
    assert found["structure.one_gather"].status == "failed", found["structure.one_gather"].message
    assert "2 all-gather" in found["structure.one_gather"].message
    assert not [c for c in report.checks if c.status == "error"]


@pytest.mark.slow
@pytest.mark.parametrize(("slug", "variant", "check_id"), [
    ("sharded_matmul", "structure_replay_answer_from_remembered_probe", "structure.product_of_placed_x"),
    ("sharded_matmul", "structure_replay_answer_scaled_drift", "structure.product_of_placed_x"),
    ("matmul_2d", "structure_replay_answer_from_remembered_w", "structure.product_of_placed_w"),
])
def test_a_replay_is_compared_with_the_exercises_answer_not_only_the_functions_own(slug: str, variant: str,
                                                                                 check_id: str) -> None:
    """Each remembers the arguments it saw and answers the grader's changed values as a replay
    of its operations will give them: full marks before #55's point 4."""
    report = grade(find_exercise(slug), EXERCISES / slug / "wrong" / f"{variant}.py")
    found = next(c for c in report.checks if c.id == check_id)
    assert found.status == "failed" and "the task's answer on those values" in found.message, found.message
