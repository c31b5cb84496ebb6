"""grader/witness/manual.py: how a program's shard_maps split their inputs, read from the
StableHLO text JAX (0.10) exports: the lines below are what ``jax.export`` wrote for a
``jax.jit(jax.shard_map(...))`` over a mesh of eight CPU devices, then variants of them."""
from __future__ import annotations

from grader.witness.manual import manual_shardings, on_devices

EXPORTED = '''
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}]}} loc(#loc)
  func.func public @main(%arg0: tensor<4x16xf32> loc("x"), %arg1: tensor<16x16xf32> loc("w")) -> (tensor<4x16xf32>) {
    %0 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"data"}, {}]>, <@mesh, [{}, {"data", "model"}]>] out_shardings=[<@mesh, [{}, {"data", "model"}]>] manual_axes={"data", "model"} (%arg2: tensor<2x16xf32>, %arg3: tensor<16x2xf32>) {
'''


def test_each_manual_computation_input_is_described_as_a_named_sharding_on_the_programs_devices() -> None:
    found = manual_shardings(EXPORTED)
    assert found == [
        {"type": "NamedSharding", "mesh_devices": list(range(8)), "mesh_shape": [2, 4],
         "axis_names": ["data", "model"], "spec": [["data"], None]},
        {"type": "NamedSharding", "mesh_devices": list(range(8)), "mesh_shape": [2, 4],
         "axis_names": ["data", "model"], "spec": [None, ["data", "model"]]}]
    # the program's devices in its order: logical device i is the i-th of them
    placed = on_devices(found, [7, 6, 5, 4, 3, 2, 1, 0])
    assert placed is not None and placed[0]["mesh_devices"] == [7, 6, 5, 4, 3, 2, 1, 0]
    assert on_devices(found, [0, 1]) is None and on_devices(None, list(range(8))) is None


def test_a_mesh_with_its_own_device_order_is_read_in_that_order() -> None:
    text = EXPORTED.replace('<["data"=2, "model"=4]>', '<["data"=2, "model"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>')
    found = manual_shardings(text)
    assert found is not None and found[0]["mesh_devices"] == [0, 2, 4, 6, 1, 3, 5, 7]


def test_what_this_reading_does_not_know_is_unreadable_never_a_guess() -> None:
    assert manual_shardings(EXPORTED.replace('{"data"}, {}]', '{"data":(1)2}, {}]')) is None  # a sub-axis
    assert manual_shardings(EXPORTED.replace('<@mesh, [{"data"}, {}]>', '<mesh<["x"=8]>, [{"x"}, {}]>')) is None
    assert manual_shardings(EXPORTED.replace("sdy.mesh @mesh", "sdy.mesh @other")) is None  # a mesh it cannot find
    assert manual_shardings("module @jit_f { func.func public @main() { } }") == []  # no shard_map at all
