"""Checks for memory_per_device, built from the grader's check library.

w placed over the 8 devices so that each holds 1/8 of it, in whatever layout the student
chooses: rows or columns over a 1-D mesh, blocks over a 2 x 4 mesh, the devices in any order,
by jax.device_put or by a jitted function's out_shardings. What is judged is what each device
really holds (the returned array's shards), not one mesh or spec; the values must be w's own,
bit for bit (placing moves data, it computes nothing).

No target-based check (PlacedOnNamedSharding, ResultFromPlacement) judges the placement: a
``NamedShardingTarget`` names one way of placing (``via``), and the right layouts use two
(device_put and jit_out). An array JAX did not compute (assembled from host buffers) fails the
cross-checks ``structure.no_host_work`` runs; one pulled to NumPy and placed again
(``jax.device_put(np.asarray(w), ...)``) is not caught."""
import numpy as np

from grader.authoring import (Array, AvoidsPrimitives, CommunicatesAtMost, HoldsAtMostPerDevice, LoadsFunction, Returns,
                              Signature, ValueProperty, WithinLimits, arguments, exactly, float32_array, no_tolerance,
                              shapes)

DEVICES = 8
SIGNATURE = Signature({"w": Array("float32", "n m")}, returns=Array("float32", "n m"))

# Distinct values; 16 x 24 splits by 8 along either axis and by 2 x 4 along both, and no value test uses it.
PROBE = {"w": (np.arange(16 * 24, dtype=np.float32).reshape(16, 24) * 0.5 - 90.0)}

CHECKS = [
    LoadsFunction(),
    Returns(id="type.like_w", title="Returns a float32 JAX array shaped like w (n, m)",
            hint="Return the placed JAX array itself: jax.device_put gives one, np.asarray would make a NumPy copy."),
    ValueProperty(id="value.w_itself", title="Returns w itself, bit for bit, on random matrices (Hypothesis)",
                  # the edges: no rows, no columns; n and m are multiples of 8
                  inputs=arguments(shapes("n m", (0, 8), (8, 0), (8, 8), (16, 8), (8, 32), (24, 16)),
                                   w=float32_array("n m")),
                  expected=exactly.of("w"), tolerance=no_tolerance,
                  hint="Placing changes no value: place w itself, not w.T, a scaled w or its rows reordered."),
    HoldsAtMostPerDevice(id="structure.an_eighth_each", title="Each device holds at most 1/8 of w",
                         fraction=1 / DEVICES,
                         hint="A NamedSharding over a mesh of all 8 devices whose PartitionSpec splits w 8 ways: "
                              "PartitionSpec('d') over a mesh of 8, or PartitionSpec('a', 'b') over a 2 x 4 mesh. "
                              "PartitionSpec() replicates it; a mesh of 4 devices gives each 1/4."),
    AvoidsPrimitives(id="structure.no_host_work", title="Placed by JAX, not assembled on the host",
                     operations=("pure_callback", "io_callback"), host=True,
                     why="Place w with jax.device_put (or a jitted function's out_shardings): JAX then moves each "
                         "block to its device itself."),
    CommunicatesAtMost(id="structure.nothing_gathered", title="Placing w moves nothing between the devices",
                       at_most_bytes=0,
                       hint="Each device takes its own block of w once: gathering the blocks back (a replicated "
                            "copy) or re-laying them out runs collectives between the devices."),
    WithinLimits(),
]
