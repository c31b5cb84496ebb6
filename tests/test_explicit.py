"""``MeshAxisTypes`` and ``TypedSharding`` (``grader.checks.explicit``): a mesh's axis types and
the sharding an array's type states, recorded in the child (``grader.child.typed``) and judged
by real gradings of a copy of move_between_shardings with the two checks added.

Both meshes Explicit: both pass. The first mesh Explicit and the second Auto (a right variant
of the exercise): the axis types pass, the result's type states no split and fails. The
reference (``Mesh(...)``, Auto): both fail. A reply whose typed sharding is no description is
the submission's doing (a protocol failure), as for any other sharding."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import exercise_with_checks

from grader.engine import grade
from grader.errors import Malformed
from grader.observe.described import check_reply

SLUG = "move_between_shardings"
REPO = Path(__file__).resolve().parent.parent
ADDED = '''

from jax.sharding import AxisType

from grader.authoring import MeshAxisTypes, TypedSharding

CHECKS[-1:-1] = [
    MeshAxisTypes(id="structure.first_explicit", title="x is first placed on an Explicit mesh", target=FIRST,
                  axis_types=(AxisType.Explicit,), hint="jax.make_mesh(..., axis_types=(AxisType.Explicit,))"),
    TypedSharding(id="structure.typed_result", title="The result's type states PartitionSpec('data')",
                  spec=("data",), axis_names=("data",), axis_types=("Explicit",)),
]
'''
POINTS = '"structure.first_explicit" = 1\n"structure.typed_result" = 1\n'
EXPLICIT = '''import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec


def move_to_second_half(x):
    first = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Explicit,), devices=jax.devices()[:4])
    second = jax.make_mesh((4,), ("data",), axis_types=(AxisType.Explicit,), devices=jax.devices()[4:])
    placed = jax.device_put(x, NamedSharding(first, PartitionSpec("data")))
    return jax.device_put(placed, NamedSharding(second, PartitionSpec("data")))
'''


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    exercise = exercise_with_checks(SLUG, ADDED, POINTS, tmp_path_factory.mktemp("exercises"))
    explicit = tmp_path_factory.mktemp("submissions") / "explicit.py"
    explicit.write_text(EXPLICIT)
    paths = {"explicit": explicit, "reference": REPO / "exercises" / SLUG / "reference.py",
             "second_auto": REPO / "exercises" / SLUG / "right" / "make_mesh_axis_types.py"}
    return {name: {c.id: c for c in grade(exercise, path).checks} for name, path in paths.items()}


@pytest.mark.slow
def test_explicit_meshes_pass_both(reports) -> None:
    first, typed = reports["explicit"]["structure.first_explicit"], reports["explicit"]["structure.typed_result"]
    assert first.status == "passed" and first.score == 1, first.message
    assert first.message == "The mesh x is placed on has axis types (AxisType.Explicit,)."
    assert typed.status == "passed", typed.message
    assert typed.message == ("The array you return has the sharding in its type: jax.typeof(result).sharding "
                             "states PartitionSpec('data') over axes ('data',) with axis_types=(AxisType.Explicit,).")


@pytest.mark.slow
def test_an_auto_mesh_states_no_split_in_the_type(reports) -> None:
    assert reports["second_auto"]["structure.first_explicit"].status == "passed"
    typed = reports["second_auto"]["structure.typed_result"]
    assert typed.status == "failed" and typed.score == 0, typed.message
    assert "its mesh's axis types are (AxisType.Auto,), not (AxisType.Explicit,)" in typed.message, typed.message
    assert "its spec is PartitionSpec(), not PartitionSpec('data') (on an Auto mesh the type states no split" \
        in typed.message, typed.message
    assert typed.observed == "jax.typeof(result).sharding states PartitionSpec() over axes ('data',) with " \
                             "axis_types=(AxisType.Auto,)"


@pytest.mark.slow
def test_the_meshes_of_jax_sharding_mesh_are_auto(reports) -> None:
    first = reports["reference"]["structure.first_explicit"]
    assert first.status == "failed" and first.hint == "jax.make_mesh(..., axis_types=(AxisType.Explicit,))"
    assert first.message == "The mesh x is placed on has axis types (AxisType.Auto,); the task asks for " \
                            "(AxisType.Explicit,).", first.message
    assert reports["reference"]["structure.typed_result"].status == "failed"


def test_a_typed_sharding_that_is_no_description_is_malformed() -> None:
    leaf = {"path": "result", "kind": "jax_array", "type": "x", "typed_sharding": {"type": "NamedSharding",
                                                                                    "axis_types": "Explicit"}}
    with pytest.raises(Malformed):
        check_reply({"value": {"leaves": [leaf]}})
    leaf["typed_sharding"] = {"type": "NamedSharding", "axis_types": ["Explicit"], "spec": ["data"]}
    check_reply({"value": {"leaves": [leaf]}})


def test_a_typed_sharding_of_a_leaf_not_returned_is_reported() -> None:
    import numpy as np

    from grader.arguments import Array, Signature
    from grader.checks import TypedSharding
    signature = Signature({"x": Array("float32", "n")}, returns=Array("float32", "n"))
    probe = {"x": np.zeros(8, np.float32)}
    assert TypedSharding(id="s.t", title="t", spec=("data",), axis_names=("data",)).problems(signature, probe) == []
    assert TypedSharding(id="s.t", title="t", spec=("data",), axis_names=("data",), leaf="result[1]").problems(
        signature, probe) == ["s.t: leaf='result[1]' is not a leaf of the declared return (result)"]
