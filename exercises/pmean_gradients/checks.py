"""Checks for pmean_gradients, built from the grader's check library.

grads is a pytree whose every leaf stacks one gradient per device along its first axis (8
rows). The function must hand each device its own row with jax.shard_map (in_specs
PartitionSpec('data') on every leaf), average across devices with jax.lax.pmean over 'data'
inside the shard_map, and give back the replicated average (out_specs PartitionSpec()).
A value-only grader accepts jnp.mean(grads['kernel'], axis=0); these checks do not."""
import math

import numpy as np

from grader.authoring import (FLOAT32, Array, LoadsFunction, NamedShardingTarget, Returns, Signature, SpecMatches,
                              UsesPrimitive, ValueProperty, Wording, WithinLimits, arguments, float32_array,
                              placement_checks, shapes, tree)

DEVICES = 8

SIGNATURE = Signature({"grads": {"kernel": Array("float32", (DEVICES, "k", "m")),
                                 "bias": Array("float32", (DEVICES, "m"))}},
                      returns={"kernel": Array("float32", "k m"), "bias": Array("float32", "m")})

# Structure is observed on these arguments: distinct values in every leaf (and across leaves),
# shapes no value test uses.
PROBE = {"grads": {"kernel": np.arange(96, dtype=np.float32).reshape(DEVICES, 4, 3) * 0.5 - 20.0,
                   "bias": np.arange(24, dtype=np.float32).reshape(DEVICES, 3) * 0.25 + 30.0}}

# Every edge of the domain is drawn first: a layer with no inputs (k = 0), no outputs (m = 0),
# one of each, and an ordinary one. Sums of 8 elements of at most 1e30 cannot overflow float32.
INPUTS = arguments(shapes("k m", (0, 2), (1, 1), (3, 0), (4, 3)),
                   grads=tree(kernel=float32_array((DEVICES, "k", "m"), bound=1e30),
                              bias=float32_array((DEVICES, "m"), bound=1e30)))


# _device_mean and _device_mean_tolerance are general (a mean along an axis, next to
# exact_axis_sum and float32_axis_sum_tolerance): they belong in grader/strategies.py, and live
# here while that file is being edited by its owner.
def _device_mean(stacked: np.ndarray) -> np.ndarray:
    """The mean over the first axis, each entry correctly rounded: math.fsum of the float32
    values in float64, then a division by 8 (exact in binary)."""
    moved = np.moveaxis(np.asarray(stacked, np.float64), 0, -1)
    sums = [math.fsum(row) for row in moved.reshape(-1, moved.shape[-1]).tolist()]
    return np.array(sums, np.float64).reshape(moved.shape[:-1]) / stacked.shape[0]


def _device_mean_tolerance(stacked: np.ndarray) -> np.ndarray:
    """How far a correct float32 mean of d values may stray from the exact one: the d - 1
    additions (in any order, on one device or across devices) each round by at most eps times
    the sum of magnitudes Σ|g|, and the division by d (8, a power of two) is exact, so
    (d - 1)·eps·Σ|g| / d < eps·Σ|g|. XLA's CPU backend may flush a subnormal partial sum to
    zero (at most tiny each, d - 1 of them, divided by d: under tiny) and a subnormal
    quotient (tiny more): eps·Σ|g| + 2·tiny in all."""
    magnitude = np.sum(np.abs(np.asarray(stacked, np.float64)), axis=0)
    return float(FLOAT32.eps) * magnitude + 2 * float(FLOAT32.tiny)


def average(grads: dict) -> dict:
    """The exact average of the devices' gradients, leaf by leaf."""
    return {name: _device_mean(leaf) for name, leaf in grads.items()}


def average_tolerance(grads: dict) -> dict:
    return {name: _device_mean_tolerance(leaf) for name, leaf in grads.items()}


MESH = dict(axis_names=("data",), devices=(None, None))
# Every leaf of grads enters the shard_map split over 'data' along its first axis.
GRADS_IN = NamedShardingTarget(**MESH, spec=("data",), via="shard_map_in", operand="grads",
                               also_accept={("data", None): "PartitionSpec('data', None) splits the first axis the "
                                                            "same way.",
                                            ("data", None, None): "PartitionSpec('data', None, None) splits the first "
                                                                  "axis the same way."})
# The average leaves the shard_map replicated. Judged on result['kernel']: operand="result" does not
# expand to the leaves of a returned dict the way operand="grads" does for an argument (the
# grader judges the path "result" itself, which a dict has no placement for). A bias given
# another out_spec than the kernel comes back with the wrong shape, which type.average_tree catches.
RESULT_OUT = NamedShardingTarget(**MESH, spec=(), via="shard_map_out", operand="result['kernel']",
                                 also_accept={(None,): "PartitionSpec(None) replicates a vector too.",
                                              (None, None): "PartitionSpec(None, None) replicates a matrix too."})

CHECKS = [
    LoadsFunction(),
    Returns(id="type.average_tree", title="Returns {'kernel': float32[k, m], 'bias': float32[m]} as JAX arrays",
            advice="For the probe's grads (kernel (8, 4, 3), bias (8, 3)) the average is kernel (4, 3) and bias "
                   "(3,): one gradient's shape, without the devices' axis.",
            hint="The average has one gradient's shape: the devices' axis is averaged away. Return the dict "
                 "shard_map gives back with out_specs=PartitionSpec()."),
    ValueProperty(id="value.random_gradients", title="Averages random gradients correctly (Hypothesis)",
                  inputs=INPUTS, expected=average, tolerance=average_tolerance,
                  hint="The answer is the mean over the 8 devices: jax.lax.pmean, not jax.lax.psum (a sum is 8 "
                       "times too large), and no factor afterwards."),
    *placement_checks(
        GRADS_IN, mesh_note="one device per gradient", from_placement=None,
        placed=Wording(id="structure.shard_map",
                       hint="Call jax.shard_map(f, mesh=mesh, in_specs=PartitionSpec('data'), "
                            "out_specs=PartitionSpec()) on grads; one PartitionSpec covers every leaf."),
        spec=Wording(id="structure.in_spec",
                     title="in_specs gives each device its own gradient: PartitionSpec('data')",
                     hint="in_specs=PartitionSpec('data') splits the first axis of every leaf, one row per device; "
                          "PartitionSpec() copies all 8 gradients to every device.")),
    SpecMatches(id="structure.out_spec", title="out_specs gives back the replicated average: PartitionSpec()",
                target=RESULT_OUT,
                hint="After jax.lax.pmean every device holds the same average: out_specs=PartitionSpec() says so."),
    UsesPrimitive(id="structure.pmean", title="A pmean over 'data' inside shard_map averages the gradients",
                  operation="pmean", axes=("data",), inside="shard_map", reads="grads",
                  hint="Inside the per-device function: jax.lax.pmean(local_gradient, 'data'). Averaging outside "
                       "shard_map, or gathering every gradient onto every device, gets the numbers without the "
                       "collective."),
    WithinLimits(),
]
