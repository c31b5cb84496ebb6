"""grader.observe.described: descriptions of shardings, meshes and shards, as the child writes
them, pass; any other shape a forged reply could give them is Malformed."""
from __future__ import annotations

import pytest

from grader.errors import Malformed
from grader.observe.described import check_description, check_params, check_program, check_reply, check_shards

NAMED = {"type": "NamedSharding", "mesh_devices": [0, 1], "mesh_shape": [2], "axis_names": ["data"],
         "spec": [None, "data", ["data", "model"]], "memory_kind": None}


@pytest.mark.parametrize("description", [
    NAMED, {"type": "default"}, {"type": "Device", "devices": [3]}, {"type": "unspecified"},
    {"type": "Mesh", "mesh_devices": None, "mesh_shape": [2, 4], "axis_names": ["a", "b"]},
    {"type": "unreadable", "error": "ValueError: no"}, {"type": "GSPMDSharding", "devices": []},
])
def test_what_the_child_writes_passes(description):
    check_description(description, "it")
    check_params({"out_shardings": [description], "in_specs": [[None, "data"]], "axis_name": "data"}, "p")


@pytest.mark.parametrize("description", [
    {}, [], 5, {"type": 5}, {**NAMED, "mesh_devices": 5}, {**NAMED, "spec": 7}, {**NAMED, "spec": [[1]]},
    {**NAMED, "axis_names": [1]}, {**NAMED, "mesh_shape": "x"}, {**NAMED, "memory_kind": 4},
    {**NAMED, "devices": [True]}, {**NAMED, "extra": 1},
])
def test_any_other_shape_is_malformed(description):
    with pytest.raises(Malformed):
        check_description(description, "it")
    with pytest.raises(Malformed):
        check_reply({"ok": True, "placements": [{"via": "jit_in", "operand": None, "sharding": description}]})


@pytest.mark.parametrize("shards", [5, [{"device": "a", "index": []}], [{"device": 0, "index": [[0]]}],
                                    [{"device": 0, "index": 3}], [{"device": 0, "index": [], "more": 1}]])
def test_shards_that_are_not_a_device_and_an_index_are_malformed(shards):
    check_shards([{"device": 0, "index": [[0, 4], [0, 2]]}], "ok")
    with pytest.raises(Malformed):
        check_reply({"value": {"leaves": [{"path": "result", "kind": "jax_array", "sharding": NAMED, "shards": shards}]}})


@pytest.mark.parametrize("program", [{"arrays": {"1": {"sharding": {}}}}, {"arrays": {"1": []}}, {"avals": {"0": []}},
                                     {"nodes": [{"primitive": "pjit", "params": {"in_shardings": [{"spec": 1}]}}]}])
def test_a_program_with_ill_typed_descriptions_is_malformed(program):
    with pytest.raises(Malformed):
        check_program(program)
