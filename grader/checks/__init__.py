"""The check library: exercises declare their checks from these pieces (imported, with
signatures and strategies, from ``grader.authoring``).

Names are imported on first use: ``grader.checks.base`` is all the engine needs before a
submission's child is launched, and the rest (Hypothesis above all) then loads while the
child imports JAX."""
from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "Check": "base", "Context": "base",
    "ResultSharding": "layout", "ShardLayout": "layout",
    "WithinLimits": "limits",
    "LoadsFunction": "load",
    "AvoidsPrimitives": "program_checks", "UsesPrimitive": "program_checks", "CyclicShift": "primitive_params",
    "CompilesAtMost": "compilation", "Donates": "compilation", "OperationCount": "budgets",
    "CommunicatesAtMost": "compiled_program", "DeviceMemoryAtMost": "compiled_program",
    "HoldsAtMostPerDevice": "compiled_program", "UsesCollective": "compiled_program",
    "Returns": "returns", "AnyOf": "routes", "Observed": "predicate", "Predicate": "predicate",
    "Wording": "placements", "placement_checks": "placements",
    "MeshMatches": "structure", "NamedShardingTarget": "structure", "PlacedOnNamedSharding": "structure",
    "ResultFromPlacement": "from_placement", "SpecMatches": "structure",
    "Case": "values", "FixedCases": "values", "ValueProperty": "values",
    "SameJit": "scope", "CollectiveCount": "traffic", "PlacedAtMostPerDevice": "traffic",
    "MeshAxisTypes": "explicit", "TypedSharding": "explicit", "LoopLength": "lengths",
    "WhileReads": "lengths", "LoopRuns": "lengths", "MemoryGrowth": "lengths",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(f"grader.checks.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'grader.checks' has no attribute {name!r}")
