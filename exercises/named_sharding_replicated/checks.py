"""Checks for named_sharding_replicated, built from the grader's check library."""
import numpy as np

from grader.authoring import (LENGTHS, Array, Case, FixedCases, LoadsFunction, MeshMatches, NamedShardingTarget,
                              PlacedOnNamedSharding, ResultFromPlacement, Returns, Signature, SpecMatches,
                              ValueProperty, WithinLimits, arguments, dims, float32_array)

SIGNATURE = Signature({"x": Array("float32", "n")}, returns=Array("float32", ()))

# Structure is observed on this input: distinct values, a length no value test uses.
PROBE = {"x": np.array([2.0, -1.0, 4.0, 0.5, -3.25, 7.0, 1.5], dtype=np.float32)}

TARGET = NamedShardingTarget(
    axis_names=("data",), spec=(), devices=(None, 1),
    also_accept={(None,): "PartitionSpec(None) leaves a vector unsplit too, so it is accepted; "
                          "PartitionSpec() says 'replicated' for arrays of every rank, scalars included."})

# Every entry is one check with its id written out (no placement_checks, no default ids): the
# test suite hides some of these checks from students, and `jaxgrade export student` removes
# hidden checks from this source by their literal ids.
CHECKS = [
    LoadsFunction(id="load.function"),
    Returns(id="type.float32_scalar", title="Returns a float32 JAX array of shape ()",
                 hint="Return the JAX array itself: float(...), .item() or np.float32(...) turn it into something "
                      "else, and keepdims=True or reshaping keeps a dimension."),
    ValueProperty(id="value.random_vectors", title="Sums random vectors correctly (Hypothesis)",
                  inputs=arguments(dims(n=LENGTHS), x=float32_array("n", bound=1e30)),
                  hint="The sum of the placed array is the plain sum of x: replication does not multiply it "
                       "by the number of devices, and every element counts."),
    FixedCases(id="value.special_inputs", title="Sums empty, long and non-finite vectors correctly",
               cases=(Case(label="the empty vector", code={"x": "[]"}),
                      Case(label="a vector of 100,000 mixed elements",
                           code={"x": "np.random.default_rng(7).uniform(-1e3, 1e3, 100_000)"}),
                      Case(label="[nan]", code={"x": "[np.nan]"}, answer=float("nan")),
                      Case(label="[inf, -inf]", code={"x": "[np.inf, -np.inf]"}, answer=float("nan")),
                      Case(label="[inf, 1.0]", code={"x": "[np.inf, 1.0]"}, answer=float("inf")),
                      Case(label="a float32 overflow", code={"x": "[3e38, 3e38]"}, answer=float("inf"))),
               hint="Sum the whole array with jnp.sum in float32: no slicing, no loops that skip elements, "
                    "no special-casing of empty or non-finite inputs."),
    PlacedOnNamedSharding(id="structure.placed", title="Places x with jax.device_put on a NamedSharding",
                          target=TARGET,
                          hint="Placement is what this exercise practises: jax.device_put(x, NamedSharding(mesh, "
                               "PartitionSpec())). jnp.sum(x) alone gives the right number but places nothing."),
    MeshMatches(id="structure.mesh", title="The mesh is jax.devices()[:1] with axis 'data'", target=TARGET,
                hint="Replication covers the devices in the mesh, not every device on the machine: build "
                     "Mesh(np.array(jax.devices()[:1]), ('data',))."),
    SpecMatches(id="structure.spec", title="The spec is PartitionSpec() (replicated)", target=TARGET,
                hint="An empty PartitionSpec() splits no dimension: every device of the mesh holds all of x."),
    ResultFromPlacement(id="structure.sum_of_placed", title="The sum is computed from the placed array",
                        target=TARGET,
                        hint="Sum the array jax.device_put returned, not the original x, and place x before "
                             "summing rather than placing the sum."),
    WithinLimits(id="limits.resources"),
]
