"""grader.observe.confirmed: the child's record of placements and returned layouts against what
the witness made when it ran the call's account. Pure data in, words out; the real gradings
(a reply forged as it is framed) are in tests/test_witness.py."""
from __future__ import annotations

from typing import Any

import numpy as np

from grader.observe.confirmed import Placed, Where, unconfirmed
from grader.observe.program import Program
from grader.observe.returned import Leaf


def _named(devices: list[int], spec: list[Any], kind: str | None = "device") -> dict[str, Any]:
    return {"type": "NamedSharding", "mesh_devices": devices, "mesh_shape": [len(devices)], "axis_names": ["data"],
            "spec": spec, "memory_kind": kind}


ONE, EIGHT = _named([0], []), _named(list(range(8)), [])
ACCOUNT = {"steps": [{"kind": "place", "sharding": ONE, "reads": [["arg", 0]]},
                     {"kind": "program", "program": 0, "reads": [["step", 0, 0]]}],
           "programs": [{"b64": ""}], "constants": [], "outputs": [["step", 1, 0]]}
WHOLE = {0: ((0, 7),)}


def _leaf(sharding: dict[str, Any], shards: dict[int, list[list[int]]] | None = None) -> Leaf:
    found = shards if shards is not None else {0: []}
    return Leaf("result", "jax_array", "jaxlib._jax.ArrayImpl", "float32", (), np.float32(1.0), sharding,
                tuple({"device": d, "index": i} for d, i in found.items()))


def _program(sharding: dict[str, Any]) -> Program:
    """The call as one program: x placed by an eager device_put onto ``sharding``, then summed."""
    return Program.from_data({
        "inputs": [0], "outputs": [2], "input_paths": ["x"], "output_paths": ["result"],
        "shapes": {"0": [7], "1": [7], "2": []},
        "nodes": [{"primitive": "device_put", "within": [], "params": {"devices": [sharding]}, "inputs": [0],
                   "outputs": [1]},
                  {"primitive": "reduce_sum", "within": [], "params": {}, "inputs": [1], "outputs": [2]}]})


def _check(claimed: dict[str, Any], placed_on: dict[str, Any], leaf: Leaf, output: dict[str, Any],
           blocks: dict[int, tuple[tuple[int, int], ...]] | None = None) -> str | None:
    placements = [{"via": "device_put", "operand": "x", "sharding": claimed}]
    return unconfirmed(_program(claimed), placements, [leaf], ACCOUNT, ["x"], [Placed(0, Where(placed_on, WHOLE))],
                       [Where(output, blocks if blocks is not None else {0: ()})], "device")


def test_a_record_the_witness_made_is_confirmed() -> None:
    assert _check(ONE, ONE, _leaf(ONE), ONE) is None


def test_no_memory_kind_named_is_the_devices_default_and_a_device_is_its_single_device_sharding() -> None:
    unnamed = _named([0], [], None)
    assert _check(unnamed, ONE, _leaf(ONE), unnamed) is None
    device, single = {"type": "Device", "devices": [0]}, {"type": "SingleDeviceSharding", "devices": [0],
                                                           "memory_kind": "device"}
    assert _check(device, single, _leaf(single), single) is None
    assert _check(_named([0], [None]), ONE, _leaf(_named([0], [["data"]])), _named([0], ["data"])) is None


def test_a_placement_the_programs_do_not_make_is_named() -> None:
    found = _check(ONE, EIGHT, _leaf(ONE), ONE)
    assert found is not None and "your call's record says x was placed with jax.device_put on" in found
    assert "devices [0, 1, 2, 3, 4, 5, 6, 7]" in found and "place it on" in found
    pinned = _named([0], [], "pinned_host")
    assert _check(pinned, ONE, _leaf(ONE), ONE) is not None  # the memory kind counts


def test_a_placement_of_another_operand_is_no_confirmation() -> None:
    account = {**ACCOUNT, "steps": [{**ACCOUNT["steps"][0], "reads": [["arg", 1]]}, ACCOUNT["steps"][1]]}
    found = unconfirmed(None, [{"via": "device_put", "operand": "x", "sharding": ONE}], [_leaf(ONE)], account,
                        ["x", "y"], [Placed(0, Where(ONE, WHOLE))], [Where(ONE, {0: ()})], "device")
    assert found is not None and "they place no such value" in found


def test_a_returned_layout_the_programs_do_not_give_is_named() -> None:
    found = _check(ONE, ONE, _leaf(ONE), EIGHT, {d: () for d in range(8)})
    assert found is not None and "result is returned on" in found and "return it on" in found
    # the same description, but the buffers the child reports are not where the witness's are
    assert _check(ONE, ONE, _leaf(ONE, {0: []}), ONE, {1: ()}) is not None


def test_a_returned_layout_is_compared_block_by_block_not_by_the_axis_names_stablehlo_drops() -> None:
    """A program's output sharding, compiled from StableHLO, names its mesh axes ``_axis_0``."""
    rows = {"type": "NamedSharding", "mesh_devices": [0, 1], "mesh_shape": [2], "axis_names": ["stage"],
            "spec": ["stage"], "memory_kind": "device"}
    unnamed = {**rows, "axis_names": ["_axis_0"], "spec": ["_axis_0"]}
    halves = {0: ((0, 1), (0, 4)), 1: ((1, 2), (0, 4))}
    leaf = Leaf("result", "jax_array", "jaxlib._jax.ArrayImpl", "float32", (2, 4), np.zeros((2, 4), np.float32), rows,
                tuple({"device": d, "index": [list(b) for b in block]} for d, block in halves.items()))
    assert unconfirmed(None, [], [leaf], ACCOUNT, ["x"], [], [Where(unnamed, halves)], "device") is None
    swapped = {0: halves[1], 1: halves[0]}  # the rows on the other devices: the record's layout is not the run's
    assert unconfirmed(None, [], [leaf], ACCOUNT, ["x"], [], [Where(unnamed, swapped)], "device") is not None
