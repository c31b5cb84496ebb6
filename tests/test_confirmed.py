"""grader.observe.confirmed: the child's record of placements and returned layouts against what
the witness made when it ran the call's account. Pure data in, words out; the real gradings
(a reply forged as it is framed) are in tests/test_witness.py."""
from __future__ import annotations

from typing import Any

import numpy as np

from grader.observe.confirmed import Placed, Ran, Where, unconfirmed
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


# -- jit shardings and shard_map in_specs, by layout ----------------------------------------------
ROWS = {"type": "NamedSharding", "mesh_devices": [0, 1], "mesh_shape": [2], "axis_names": ["data"],
        "spec": ["data", None], "memory_kind": "device"}
REPLICATED = {**ROWS, "spec": []}
HALVES = {0: ((0, 2), (0, 4)), 1: ((2, 4), (0, 4))}
WHOLES = {0: ((0, 4), (0, 4)), 1: ((0, 4), (0, 4))}
# x (argument 0) placed on both devices, then read by one program: the jitted call
JITTED = {"steps": [{"kind": "place", "sharding": REPLICATED, "reads": [["arg", 0]]},
                    {"kind": "program", "program": 0, "reads": [["step", 0, 0]]}],
          "programs": [{"b64": ""}], "constants": [], "outputs": [["step", 1, 0]]}


def _transformed(claims: list[dict[str, Any]], ran: list[Ran], account: dict[str, Any] = JITTED) -> str | None:
    return unconfirmed(None, claims, [], account, ["x"], [], [], "device", ran)


def _jit(taken: dict[int, Any] | None, gave: dict[int, Any], manual: tuple[dict[str, Any], ...] | None = ()) -> Ran:
    """The jitted program as the witness ran it: x taken as ``taken`` lays it out (rows or whole;
    None: left to the compiler, arrived uncommitted), its output ``gave``."""
    return Ran(1, (None if taken is None else Where(_unnamed(taken), taken),), (Where(_unnamed(gave), gave),), manual)


def _unnamed(blocks: dict[int, Any]) -> dict[str, Any]:
    """What a compiled program's sharding describes: its axes named ``_axis_0``."""
    return {**ROWS, "axis_names": ["_axis_0"], "spec": ["_axis_0", None] if blocks == HALVES else []}


def _jitted(within: list[str], in_shardings: dict[str, Any], out_shardings: dict[str, Any]) -> Program:
    """The call as one program: a jitted call on x (``within``: the transformations around it)."""
    return Program.from_data({
        "inputs": [0], "outputs": [1], "input_paths": ["x"], "output_paths": ["result"],
        "shapes": {"0": [4, 4], "1": [4, 4]},
        "nodes": [{"primitive": "jit", "within": within, "inputs": [0], "outputs": [1],
                   "params": {"in_shardings": [in_shardings], "out_shardings": [out_shardings]}}]})


def test_jit_shardings_the_program_lays_out_so_are_confirmed_by_their_blocks_not_their_names() -> None:
    claims = [{"via": "jit_in", "operand": "x", "sharding": ROWS}]
    assert _transformed(claims, [_jit(HALVES, WHOLES)]) is None
    program = _jitted([], ROWS, REPLICATED)
    assert unconfirmed(program, claims, [], JITTED, ["x"], [], [], "device", [_jit(HALVES, WHOLES)]) is None


def test_a_jit_in_sharding_the_program_does_not_take_its_operand_on_is_named() -> None:
    found = _transformed([{"via": "jit_in", "operand": "x", "sharding": ROWS}], [_jit(WHOLES, WHOLES)])
    assert found is not None and "your call's record says x was placed by the in_shardings of a jax.jit" in found
    assert "P('data')" in found and "lay it out as" in found


def test_a_jit_out_sharding_no_program_output_has_is_named() -> None:
    found = unconfirmed(_jitted([], {"type": "unspecified"}, ROWS), [], [], JITTED, ["x"], [], [], "device",
                        [_jit(HALVES, WHOLES)])
    assert found is not None and "your call's record says a value was placed by the out_shardings of a jax.jit" in found


def test_a_jit_in_sharding_of_another_operand_is_not_confirmed_by_x() -> None:
    """Two arguments; the record says y entered split, but only x (the first) did: y's program input is whole."""
    account = {**JITTED, "steps": [JITTED["steps"][0],
                                   {"kind": "program", "program": 0, "reads": [["step", 0, 0], ["arg", 1]]}]}
    ran = Ran(1, (Where(_unnamed(HALVES), HALVES), Where(_unnamed(WHOLES), WHOLES)), (), ())
    claim = {"via": "jit_in", "operand": "y", "sharding": ROWS}
    assert unconfirmed(None, [claim], [], account, ["x", "y"], [], [], "device", [ran]) is not None
    assert unconfirmed(None, [{**claim, "operand": "x"}], [], account, ["x", "y"], [], [], "device", [ran]) is None


def test_what_the_witness_cannot_read_is_left_on_the_childs_word_never_accused() -> None:
    claim = {"via": "jit_in", "operand": "x", "sharding": ROWS}
    assert _transformed([claim], [_jit(None, WHOLES)]) is None  # left to the compiler, arrived uncommitted
    assert _transformed([claim], []) is None  # no program the account ran reads x (an eager vmap's call)
    uneven = {**ROWS, "mesh_devices": [0, 1, 2], "mesh_shape": [3]}  # 4 rows over 3 devices: JAX pads
    assert _transformed([{**claim, "sharding": uneven}], [_jit(WHOLES, WHOLES)]) is None
    vague = {"type": "GSPMDSharding", "devices": [0, 1]}
    assert _transformed([{**claim, "sharding": vague}], [_jit(WHOLES, WHOLES)]) is None


SPLIT_COLUMNS = {"type": "NamedSharding", "mesh_devices": [0, 1], "mesh_shape": [2], "axis_names": ["model"],
                 "spec": [None, "model"]}


def test_shard_map_in_specs_are_confirmed_by_how_a_manual_computation_splits_its_inputs() -> None:
    claim = {"via": "shard_map_in", "operand": "x", "sharding": SPLIT_COLUMNS}
    manual = {**SPLIT_COLUMNS, "spec": [None, ["model"]]}
    assert _transformed([claim], [_jit(WHOLES, WHOLES, (REPLICATED, manual))]) is None
    on_two_axes = {**SPLIT_COLUMNS, "mesh_shape": [1, 2], "axis_names": ["data", "model"]}  # a size-1 axis splits nothing
    assert _transformed([{**claim, "sharding": on_two_axes}], [_jit(WHOLES, WHOLES, (manual,))]) is None
    rows = {**SPLIT_COLUMNS, "spec": [["model"], None]}
    found = _transformed([claim], [_jit(WHOLES, WHOLES, (REPLICATED, rows))])
    assert found is not None and "the in_specs of a jax.shard_map" in found
    reversed_devices = {**manual, "mesh_devices": [1, 0]}  # the same spec over the devices in the other order
    assert _transformed([claim], [_jit(WHOLES, WHOLES, (reversed_devices,))]) is not None


def test_a_shard_map_the_witness_cannot_read_is_never_accused() -> None:
    claim = {"via": "shard_map_in", "operand": None, "sharding": SPLIT_COLUMNS}
    assert _transformed([claim], [_jit(WHOLES, WHOLES, None)]) is None  # manual computations unreadable
    assert _transformed([claim], [_jit(WHOLES, WHOLES, ())]) is None  # none in the program (dropped as dead code)
    broken = {**JITTED, "steps": [*JITTED["steps"], {"kind": "break", "reads": [], "made": []}]}
    rows = {**SPLIT_COLUMNS, "spec": [["model"], None]}
    assert _transformed([claim], [_jit(WHOLES, WHOLES, (rows,))], broken) is None  # a host callback in the call


def test_the_call_programs_jit_in_shardings_are_confirmed_but_not_a_jit_inside_another() -> None:
    """A jitted call on x, as the call's program records it: its in_shardings say rows."""
    program = _jitted([], ROWS, {"type": "unspecified"})
    found = unconfirmed(program, [], [], JITTED, ["x"], [], [], "device", [_jit(WHOLES, WHOLES)])
    assert found is not None and "x was placed by the in_shardings" in found
    # the same jit inside a jitted program: its in_shardings apply to the program's body, which is not read
    assert unconfirmed(_jitted(["jit"], ROWS, ROWS), [], [], JITTED, ["x"], [], [], "device",
                       [_jit(WHOLES, WHOLES)]) is None
