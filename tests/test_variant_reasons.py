"""Wrong variants fail for the reason their names give, not only in the declared category (which
is all ``jaxgrade validate`` asks), and the checks a variant gets right stay passed, so a report
points at the one mistake: for the exercises whose checks overlap most (mixed_precision_matmul,
pipeline_shift, tensor_parallel_mlp, fsdp_gather_params, grad_accumulation, explicit_sharding).
tests/test_validate.py validates them with the rest of the catalogue."""
from __future__ import annotations

from pathlib import Path

import pytest

from grader import find_exercise, grade

REPO = Path(__file__).resolve().parent.parent

# variant: (check ids that must fail, check ids that must pass)
MIXED = {
    "wrong/value_casts_the_result.py": (
        {"value.rounded_operands", "value.one_product", "structure.x_bfloat16", "structure.w_bfloat16",
         "structure.result_not_cast"},
        {"structure.float32_accumulation", "structure.no_emulated_rounding"}),
    "wrong/value_casts_only_x.py": (
        {"value.rounded_operands", "value.one_product", "structure.w_bfloat16"},
        {"structure.x_bfloat16", "structure.float32_accumulation", "structure.result_not_cast"}),
    "wrong/value_bfloat16_accumulation.py": (
        {"value.rounded_operands", "structure.float32_accumulation"},
        {"type.float32_product", "structure.x_bfloat16", "structure.w_bfloat16"}),
    "wrong/structure_bfloat16_accumulation_jitted.py": (
        {"structure.float32_accumulation"},
        {"value.rounded_operands", "value.one_product", "structure.x_bfloat16", "structure.w_bfloat16",
         "structure.result_not_cast"}),
    "wrong/structure_reduce_precision.py": (
        {"structure.no_emulated_rounding", "structure.x_bfloat16", "structure.w_bfloat16"},
        {"value.rounded_operands", "value.one_product", "structure.float32_accumulation"}),
    "wrong/structure_round_trip_casts.py": (
        {"structure.x_bfloat16", "structure.w_bfloat16"},
        {"value.rounded_operands", "value.one_product", "structure.float32_accumulation",
         "structure.no_emulated_rounding", "structure.result_not_cast"}),
    "right/harmless_extra_converts.py": (set(), None),
}
PIPELINE = {
    "wrong/structure_jit_roll_on_placed_rows.py": (
        {"structure.shard_map", "structure.ppermute"},
        {"value.rows_shifted", "structure.compiled_permute", "structure.one_row_moved", "structure.rows_on_stages"}),
    "wrong/structure_all_gather_then_slice.py": (
        {"structure.ppermute", "structure.no_gather_or_reduce", "structure.compiled_permute",
         "structure.one_row_moved"},
        {"value.rows_shifted", "structure.in_spec", "structure.out_spec", "structure.rows_on_stages"}),
    "wrong/structure_psum_of_placed_rows.py": (
        {"structure.ppermute", "structure.no_gather_or_reduce", "structure.compiled_permute",
         "structure.one_row_moved"},
        {"value.rows_shifted", "structure.rows_on_stages"}),
    "wrong/value_previous_stage.py": (
        {"value.rows_shifted", "structure.ppermute"},
        {"structure.compiled_permute", "structure.one_row_moved", "structure.rows_on_stages"}),
    "wrong/structure_devices_reversed.py": (
        {"structure.rows_on_stages"}, {"value.rows_shifted", "structure.ppermute", "structure.compiled_permute"}),
    "wrong/structure_permutes_all_of_x.py": (
        {"structure.in_spec", "structure.one_row_moved"},
        {"value.rows_shifted", "structure.ppermute", "structure.compiled_permute", "structure.rows_on_stages"}),
    "wrong/structure_host_round_trip.py": (
        {"structure.no_gather_or_reduce", "structure.shard_map", "structure.ppermute"}, {"value.rows_shifted"}),
}
TENSOR_PARALLEL = {
    "wrong/value_relu_after_psum.py": (
        {"value.mlp"},
        {"structure.psum", "structure.one_psum", "structure.compiled_all_reduce", "structure.one_output_moved",
         "structure.output_replicated"}),
    "wrong/value_pmean.py": (
        {"value.mlp", "structure.psum", "structure.one_psum"},
        {"structure.w1_spec", "structure.w2_spec", "structure.compiled_all_reduce", "structure.one_output_moved"}),
    "wrong/structure_two_psums.py": (
        {"structure.one_psum"},
        {"value.mlp", "structure.psum", "structure.compiled_all_reduce", "structure.one_output_moved",
         "structure.output_replicated"}),
    "wrong/structure_all_gather_w1.py": (
        {"structure.compiled_all_reduce", "structure.one_output_moved"},
        {"value.mlp", "structure.w1_spec", "structure.psum", "structure.one_psum"}),
    "wrong/structure_replicated_weights.py": (
        {"structure.w1_spec", "structure.w2_spec", "structure.psum"},
        {"value.mlp", "structure.mesh", "structure.x_spec", "structure.out_spec"}),
    "wrong/structure_half_mesh.py": (
        {"structure.mesh", "structure.output_replicated"},
        {"value.mlp", "structure.w1_spec", "structure.psum", "structure.one_psum"}),
    "wrong/structure_output_on_one_device.py": (
        {"structure.output_replicated"}, {"value.mlp", "structure.psum", "structure.out_spec"}),
    "wrong/structure_host_numpy.py": ({"structure.shard_map", "structure.psum"}, {"value.mlp"}),
    "right/eager_shard_map.py": (set(), None),
}
FSDP = {
    # full marks before issue #42
    # (each of these three holds the gathered w between programs, which structure.stored_eighth counts since #55)
    "wrong/structure_gather_in_own_jit.py": (
        {"structure.gather_in_forward", "structure.forward_takes_shards", "structure.stored_eighth"},
        {"value.forward", "structure.stored_spec", "structure.gathers_w",
         "structure.compiled_all_gather", "structure.one_gather", "structure.one_copy_moved",
         "structure.returns_stored"}),
    "wrong/structure_gather_shard_map_eager.py": (
        {"structure.gather_in_forward", "structure.forward_takes_shards", "structure.stored_eighth"},
        {"value.forward", "structure.gathers_w", "structure.compiled_all_gather",
         "structure.one_copy_moved"}),
    "wrong/structure_gather_eagerly.py": (
        {"structure.gather_in_forward", "structure.stored_eighth", "structure.forward_takes_shards"},
        {"value.forward", "structure.stored_spec", "structure.returns_stored"}),
    "wrong/structure_stored_replicated.py": (
        {"structure.stored_spec", "structure.stored_eighth"}, {"value.forward", "structure.gather_in_forward"}),
    "wrong/structure_psum_of_partial_products.py": (
        {"structure.gathers_w", "structure.compiled_all_gather", "structure.gather_in_forward"},
        {"value.forward", "structure.stored_spec", "structure.stored_eighth", "structure.forward_takes_shards"}),
    "wrong/structure_gathers_x.py": (
        {"structure.gathers_w", "structure.compiled_all_gather"}, {"value.forward", "structure.stored_spec"}),
    "wrong/structure_returns_gathered_w.py": (
        {"structure.returns_stored", "structure.stored_eighth"},
        {"value.forward", "structure.gather_in_forward", "structure.forward_takes_shards",
         "structure.one_copy_moved"}),
    "wrong/structure_two_gathers.py": (
        {"structure.one_gather"},
        {"value.forward", "structure.gather_in_forward", "structure.gathers_w", "structure.compiled_all_gather",
         "structure.one_copy_moved"}),
    # lost a point before issue #42
    "right/shard_map_all_gather.py": (set(), None),
    # full marks before issue #55: a replicated copy of w made without a device_put the record names
    "wrong/structure_replicated_copy_from_callback.py": (
        {"structure.stored_eighth"},
        {"value.forward", "structure.stored_spec", "structure.forward_takes_shards", "structure.gather_in_forward",
         "structure.one_gather", "structure.one_copy_moved", "structure.returns_stored"}),
    "wrong/structure_full_copy_jnp_array_device.py": (
        {"structure.stored_eighth"},
        {"value.forward", "structure.stored_spec", "structure.forward_takes_shards", "structure.gather_in_forward",
         "structure.one_gather", "structure.one_copy_moved", "structure.returns_stored"}),
    "wrong/structure_kept_copy_from_callback.py": (
        {"structure.stored_eighth"},
        {"value.forward", "structure.stored_spec", "structure.forward_takes_shards", "structure.gather_in_forward",
         "structure.one_gather", "structure.one_copy_moved", "structure.returns_stored"}),
    "wrong/structure_replicated_by_jitted_identity.py": (
        {"structure.stored_eighth"},
        {"value.forward", "structure.stored_spec", "structure.gather_in_forward", "structure.one_gather",
         "structure.returns_stored"}),
}
GRAD = {
    "wrong/structure_python_loop_unrolled.py": (
        {"structure.loop_per_microbatch", "structure.does_not_grow"},
        {"value.full_batch_gradient", "structure.no_host_work"}),
    "wrong/structure_fori_literal_length.py": (
        {"structure.loop_per_microbatch"}, {"structure.does_not_grow", "structure.memory", "structure.no_host_work"}),
    "wrong/structure_padded_to_fixed_length.py": (
        {"structure.loop_per_microbatch"},
        {"value.full_batch_gradient", "structure.does_not_grow", "structure.no_host_work"}),
    "wrong/structure_padded_while_loop.py": (
        {"structure.loop_per_microbatch"},
        {"value.full_batch_gradient", "structure.does_not_grow", "structure.memory", "structure.no_host_work"}),
    "wrong/structure_full_batch_gradient.py": (
        {"structure.memory"}, {"value.full_batch_gradient", "structure.does_not_grow", "structure.no_host_work"}),
    "wrong/structure_host_numpy_gradient.py": ({"structure.no_host_work"}, {"value.full_batch_gradient"}),
    "wrong/value_no_division_by_k.py": (
        {"value.full_batch_gradient"},
        {"structure.loop_per_microbatch", "structure.does_not_grow", "structure.memory", "structure.no_host_work"}),
    "wrong/value_carry_from_ones.py": (
        {"value.full_batch_gradient"},
        {"structure.loop_per_microbatch", "structure.does_not_grow", "structure.memory", "structure.no_host_work"}),
    # full marks before issue #55: the steps XLA runs, and a running sum rather than every gradient stacked
    "wrong/structure_masked_fixed_while_loop.py": (
        {"structure.step_per_microbatch"},
        {"value.full_batch_gradient", "structure.loop_per_microbatch", "structure.running_sum",
         "structure.does_not_grow", "structure.memory", "structure.no_host_work"}),
    "wrong/structure_masked_traced_bound.py": (
        {"structure.step_per_microbatch"},
        {"value.full_batch_gradient", "structure.loop_per_microbatch", "structure.running_sum",
         "structure.does_not_grow", "structure.memory", "structure.no_host_work"}),
    "wrong/structure_map_then_mean.py": (
        {"structure.running_sum"},
        {"value.full_batch_gradient", "structure.loop_per_microbatch", "structure.step_per_microbatch",
         "structure.does_not_grow", "structure.memory", "structure.no_host_work"}),
    "wrong/structure_scan_outputs_gradients.py": (
        {"structure.running_sum"},
        {"value.full_batch_gradient", "structure.loop_per_microbatch", "structure.step_per_microbatch",
         "structure.does_not_grow", "structure.memory", "structure.no_host_work"}),
    "wrong/structure_scan_twice_per_microbatch.py": (
        {"structure.loop_per_microbatch", "structure.step_per_microbatch"}, {"value.full_batch_gradient"}),
    "right/fori_loop_traced_bounds.py": (set(), None),
    "right/while_loop.py": (set(), None),
    "right/value_and_grad_scan.py": (set(), None),
}
EXPLICIT = {
    "wrong/structure_auto_mesh.py": (
        {"structure.explicit_mesh", "structure.reshard", "structure.typed_columns"},
        {"value.unchanged", "structure.spec", "structure.from_placed", "structure.column_blocks"}),
    "wrong/structure_device_put_to_columns.py": (
        {"structure.reshard"},
        {"value.unchanged", "structure.explicit_mesh", "structure.typed_columns", "structure.column_blocks"}),
    "wrong/structure_transpose_trick.py": (
        {"structure.placed", "structure.reshard"},
        {"value.unchanged", "structure.typed_columns", "structure.column_blocks"}),
    "wrong/structure_all_gather_then_slice.py": (
        {"structure.all_to_all", "structure.one_eighth_moved"},
        {"value.unchanged", "structure.reshard", "structure.typed_columns", "structure.column_blocks"}),
    "wrong/structure_rows_skipped.py": (
        {"structure.placed", "structure.spec"},
        {"value.unchanged", "structure.typed_columns", "structure.column_blocks"}),
    "wrong/structure_reshards_back_to_rows.py": (
        {"structure.typed_columns", "structure.column_blocks"},
        {"value.unchanged", "structure.placed", "structure.explicit_mesh", "structure.reshard"}),
    "wrong/structure_reshard_replicated.py": (
        {"structure.typed_columns", "structure.all_to_all", "structure.one_eighth_moved"},
        {"value.unchanged", "structure.explicit_mesh", "structure.reshard"}),
    "wrong/structure_host_round_trip.py": ({"structure.from_placed", "structure.reshard"}, {"value.unchanged"}),
    "right/set_mesh_partition_spec.py": (set(), None),
    "right/jitted_reshard.py": (set(), None),
}
CASES = [("mixed_precision_matmul", v, *e) for v, e in MIXED.items()] + \
        [("pipeline_shift", v, *e) for v, e in PIPELINE.items()] + \
        [("tensor_parallel_mlp", v, *e) for v, e in TENSOR_PARALLEL.items()] + \
        [("fsdp_gather_params", v, *e) for v, e in FSDP.items()] + \
        [("grad_accumulation", v, *e) for v, e in GRAD.items()] + \
        [("explicit_sharding", v, *e) for v, e in EXPLICIT.items()]


@pytest.mark.slow
@pytest.mark.parametrize("slug, variant, failing, passing", CASES, ids=[f"{s}:{v}" for s, v, *_ in CASES])
def test_each_variant_fails_the_checks_its_mistake_names(slug: str, variant: str, failing: set[str],
                                                         passing: set[str] | None) -> None:
    exercise = find_exercise(slug)
    report = grade(exercise, REPO / "exercises" / slug / variant)
    status = {c.id: c.status for c in report.checks}
    failed = {i for i, s in status.items() if s != "passed"}
    assert "error" not in status.values(), status
    if passing is None:  # a right variant: full marks
        assert not failed, status
        return
    assert failing <= failed, status
    assert not (passing & failed), status


def test_the_value_strategy_tells_operand_rounding_from_result_rounding() -> None:
    """Every drawn input with k = 1 and no zero: the right entries are no bfloat16 numbers, so
    rounding the result can never give them; and no operand element is one either."""
    import numpy as np
    from hypothesis import given, settings

    checks = find_exercise("mixed_precision_matmul")._checks_module  # its checks.py, as the engine loads it

    @settings(max_examples=200, deadline=None, database=None)
    @given(checks.INPUTS.strategy({"n": 3, "k": 1, "m": 2}))
    def draws(arguments):
        x, w = arguments["x"], arguments["w"]
        for a in (x, w):
            nonzero = a[a != 0]
            assert (checks.to_bfloat16(nonzero) != nonzero).all()
        right = checks.rounded_product(x, w)
        result_rounded = checks.to_bfloat16(np.asarray(x, np.float64) @ np.asarray(w, np.float64)).astype(np.float64)
        tolerance = checks.float32_accumulation_tolerance(x, w)
        assert ((np.abs(result_rounded - right) > tolerance) | (right == 0)).all()

    draws()
