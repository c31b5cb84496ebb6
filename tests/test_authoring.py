"""The authoring surface: one import for checks.py, the default load and limits checks, and the
standard placement checks worded from their target."""
from __future__ import annotations

import subprocess
import sys
import types

import grader.authoring as authoring
import grader.authoring.declarations as declarations
import grader.checks
from grader.authoring import (LoadsFunction, MeshMatches, NamedShardingTarget, PlacedOnNamedSharding,
                              ResultFromPlacement, Signature, SpecMatches, Wording, WithinLimits, placement_checks)
from grader.arguments import Array
from grader.authoring.exercise import find_exercise


def test_authoring_exports_every_check_an_exercise_declares():
    missing = set(grader.checks.__all__) - set(authoring.__all__) - {"Check", "Context"}
    assert not missing and all(hasattr(authoring, name) for name in authoring.__all__)
    # what checks.py declares with is grader.authoring.declarations' names, each re-exported
    declared = {name for name, value in vars(declarations).items()
                if not name.startswith("_") and name != "annotations" and not isinstance(value, types.ModuleType)}
    assert declared == set(authoring._DECLARATIONS)


def test_the_authoring_package_imports_nothing_heavy_until_a_name_is_used():
    """The grading stages import grader.authoring.exercise on every check: the package's surface
    must not pull in the checks' vocabulary (NumPy, Hypothesis) or the exports with it."""
    probe = ("import sys, grader.authoring.exercise, grader.authoring as a\n"
             "heavy = [m for m in ('numpy', 'hypothesis', 'grader.authoring.declarations', 'grader.authoring.export')"
             " if m in sys.modules]\n"
             "assert not heavy, heavy\n"
             "assert a.Signature is sys.modules['grader.authoring.declarations'].Signature\n"
             "assert a.find_course is sys.modules['grader.authoring.course'].find_course\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_load_and_limits_checks_default_their_wording_from_the_exercise():
    checks = {c.id: c for c in find_exercise("shard_rows").checks}
    assert checks["load.function"].title == "The file loads and defines row_sums(x)"
    assert checks["limits.resources"].title == "Runs within the time and memory limits"
    signature = Signature({"x": Array("float32", "n"), "w": Array("float32", "n")})
    assert LoadsFunction().for_function("f", signature).title == "The file loads and defines f(x, w)"
    assert LoadsFunction(title="Mine").for_function("f", signature).title == "Mine"
    factory = Signature({"w": Array("float32", "n"), "lr": Array("float32", ())}, factory=True)
    assert LoadsFunction().for_function("make_step", factory).title == \
        "The file loads, and make_step() returns a function of (w, lr)"
    assert (WithinLimits().id, LoadsFunction().id) == ("limits.resources", "load.function")


def test_placement_checks_are_worded_from_the_target():
    target = NamedShardingTarget(axis_names=("data",), spec=("data", None), match="exact")
    placed, mesh, spec, computed = placement_checks(target, mesh_note="every device, one axis named 'data'")
    assert [type(c) for c in (placed, mesh, spec, computed)] == [PlacedOnNamedSharding, MeshMatches, SpecMatches,
                                                                 ResultFromPlacement]
    assert all(c.target is target for c in (placed, mesh, spec, computed))
    assert [c.id for c in (placed, mesh, spec, computed)] == ["structure.placed", "structure.mesh", "structure.spec",
                                                              "structure.from_placed"]
    assert placed.title == "Places x itself with jax.device_put on a NamedSharding"
    assert mesh.title == "The mesh is all of jax.devices() with axis 'data'"
    assert mesh.hint == "Mesh(np.array(jax.devices()), ('data',)): every device, one axis named 'data'."
    assert spec.title == "The spec is PartitionSpec('data', None)"
    assert spec.hint == ("The spec's entries are x's dimensions in order: PartitionSpec('data', None) splits "
                         "dimension 0 over 'data' and keeps dimension 1 whole.")
    assert computed.title == "The result is computed from the placed x"


def test_placement_checks_of_a_named_target_on_a_grid_of_some_devices():
    target = NamedShardingTarget(axis_names=("data", "model"), spec=(), devices=(None, 4), mesh_shape=(2, 2),
                                 operand="w")
    placed, mesh, spec = placement_checks(target, "w", from_placement=None)
    assert [c.id for c in (placed, mesh, spec)] == ["structure.w_placed", "structure.w_mesh", "structure.w_spec"]
    assert placed.title == "Places w with jax.device_put on a NamedSharding"  # a copy counts: not "itself"
    assert mesh.title == "w's mesh is jax.devices()[:4] as a 2 x 2 grid with axes ('data', 'model')"
    assert mesh.hint == "Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ('data', 'model'))."
    assert spec.title == "w is replicated: PartitionSpec()"
    assert spec.hint == "PartitionSpec() splits nothing: every device of the mesh holds all of w."


def test_placement_checks_take_the_exercise_s_own_words_and_leave_out_what_it_drops():
    target = NamedShardingTarget(axis_names=("data",), spec=("data",), via="shard_map_in")
    checks = placement_checks(target, placed=None, mesh=Wording(hint=None),
                              spec=Wording(id="structure.in_spec", title="in_specs splits x"))
    assert [type(c) for c in checks] == [MeshMatches, SpecMatches, ResultFromPlacement]
    mesh, spec, _ = checks
    assert mesh.hint is None and mesh.title == "The shard_map mesh is all of jax.devices() with axis 'data'"
    assert (spec.id, spec.title) == ("structure.in_spec", "in_specs splits x")
    assert spec.hint is not None  # not given: derived
