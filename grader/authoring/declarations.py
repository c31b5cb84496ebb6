"""Everything an exercise's checks.py declares its checks with, from one import (grader.authoring
re-exports it all on first use):

    from grader.authoring import (Array, LoadsFunction, NamedShardingTarget, Signature, ValueProperty,
                                  WithinLimits, arguments, float32_array, placement_checks, shapes)

the signature's pieces (``grader.arguments``), the checks and their targets (``grader.checks``)
and the inputs, oracles and tolerances of value checks (``grader.strategies``). It imports
them all at once, Hypothesis included: only an exercise's checks.py imports it, which the
engine loads while the submission's child starts. Its names are grader.authoring's _DECLARATIONS
(tests/test_authoring.py holds the two equal)."""
from __future__ import annotations

from grader.arguments import Array, Key, Scalar, Signature
from grader.checks.budgets import OperationCount
from grader.checks.compilation import CompilesAtMost, Donates
from grader.checks.explicit import MeshAxisTypes, TypedSharding
from grader.checks.lengths import LoopLength, LoopRuns, MemoryGrowth, WhileReads
from grader.checks.compiled_program import (CommunicatesAtMost, DeviceMemoryAtMost, HoldsAtMostPerDevice,
                                            UsesCollective)
from grader.checks.from_placement import ResultFromPlacement
from grader.checks.layout import ResultSharding, ShardLayout
from grader.checks.limits import WithinLimits
from grader.checks.load import LoadsFunction
from grader.checks.placements import Wording, placement_checks
from grader.checks.primitive_params import CyclicShift
from grader.checks.program_checks import AvoidsPrimitives, UsesPrimitive
from grader.checks.predicate import Observed, Predicate
from grader.checks.returns import Returns
from grader.checks.scope import SameJit
from grader.checks.traffic import CollectiveCount, PlacedAtMostPerDevice
from grader.checks.routes import AnyOf
from grader.checks.structure import MeshMatches, NamedShardingTarget, PlacedOnNamedSharding, SpecMatches
from grader.checks.values import Case, FixedCases, ValueProperty
from grader.outcome import Outcome
from grader.strategies import (FLOAT32, LENGTHS, arguments, dims, elementwise_tolerance, exact_axis_sum, exact_matmul,
                               exact_sum, exactly, float32_array, float32_axis_sum_tolerance, float32_matmul_tolerance,
                               float32_sum_tolerance, int_array, keys, named, no_tolerance, shapes, tree)
