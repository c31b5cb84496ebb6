"""The check library: exercises declare their checks from these pieces."""
from grader.checks.base import Check, Context
from grader.checks.layout import ResultSharding, ShardLayout
from grader.checks.limits import WithinLimits
from grader.checks.load import LoadsFunction
from grader.checks.program_checks import AvoidsPrimitives, UsesPrimitive
from grader.checks.returns import ReturnsArray
from grader.checks.structure import (MeshMatches, NamedShardingTarget, PlacedOnNamedSharding, ResultFromPlacement,
                                     SpecMatches)
from grader.checks.values import Case, FixedCases, ValueProperty

__all__ = ["Case", "Check", "Context", "FixedCases", "LoadsFunction", "MeshMatches", "NamedShardingTarget",
           "PlacedOnNamedSharding", "ResultFromPlacement", "ReturnsArray", "SpecMatches", "ValueProperty",
           "WithinLimits", "AvoidsPrimitives", "UsesPrimitive", "ResultSharding", "ShardLayout"]
