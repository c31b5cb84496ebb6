"""Turn a traced JAX program into plain data the grader can analyse (runs in the child).

Every value gets an integer id; every equation becomes a node with the ids it reads and
writes, its primitive's name and its simple parameters (shardings described as dicts).
Calls whose inner program lines up one-to-one with their operands (``jit``, ``shard_map``,
custom derivatives, ...) are inlined, so dataflow follows values through them. Any other
nested program (``cond``, ``while``, ``scan``) is linked conservatively: everything it
produces may derive from everything it reads.
"""
from __future__ import annotations

from typing import Any, Callable

from jax._src import core
from jax import Device
from jax.sharding import AbstractMesh, Mesh, PartitionSpec, Sharding

Describe = Callable[[Any], dict[str, Any]]


def _simple(value: Any, describe: Describe) -> Any:
    """A JSON-able view of a parameter, or None for the ones that say nothing structural."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (Sharding, Device)):
        return describe(value)
    if isinstance(value, PartitionSpec):  # shard_map's in_specs/out_specs, in describe()'s spec form
        return [list(p) if isinstance(p, tuple) else (p if p is None or isinstance(p, str) else str(p))
                for p in value]
    if isinstance(value, (Mesh, AbstractMesh)):
        return _mesh(value)
    if type(value).__name__ in ("UnspecifiedValue", "AUTO"):  # jit in/out_shardings left to the compiler
        return {"type": "unspecified"}
    if isinstance(value, (tuple, list)) and len(value) <= 64:
        items = [_simple(v, describe) for v in value]
        return items if all(i is not None or v is None for i, v in zip(items, value)) else None
    return None


def _mesh(mesh: Mesh | AbstractMesh) -> dict[str, Any]:
    """A mesh parameter (shard_map's) in the same terms as a NamedSharding's mesh."""
    try:
        devices = [int(d.id) for d in mesh.devices.flat]
    except (AttributeError, ValueError):  # an AbstractMesh names no devices
        devices = None
    return {"type": "Mesh", "mesh_devices": devices, "mesh_shape": [int(n) for n in dict(mesh.shape).values()],
            "axis_names": [str(a) for a in mesh.axis_names]}


def _sub_programs(params: dict[str, Any]) -> list[core.Jaxpr | core.ClosedJaxpr]:
    found = []
    for value in params.values():
        candidates = value if isinstance(value, (tuple, list)) else (value,)
        found.extend(c for c in candidates if isinstance(c, (core.Jaxpr, core.ClosedJaxpr)))
    return found


class _Builder:
    """Numbers values scope by scope: a nested program seen twice (a jitted function called
    twice) gets fresh ids the second time, so dataflow never crosses between the calls."""

    def __init__(self, describe: Describe) -> None:
        self.describe = describe
        self.avals: dict[int, dict[str, Any]] = {}
        self.nodes: list[dict[str, Any]] = []

    def fresh(self, var: core.Var) -> int:
        new_id = len(self.avals)
        aval = var.aval
        self.avals[new_id] = {"shape": list(getattr(aval, "shape", ())), "dtype": str(getattr(aval, "dtype", ""))}
        return new_id

    def walk(self, jaxpr: core.Jaxpr, env: dict[core.Var, int], within: tuple[str, ...]) -> list[int | None]:
        """Walk one scope; ``env`` holds the ids of its inputs. Returns the ids of its outputs."""
        def read(atom: Any) -> int | None:
            if isinstance(atom, core.Literal):
                return None
            if atom not in env:
                env[atom] = self.fresh(atom)
            return env[atom]

        for var in jaxpr.constvars:
            read(var)
        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            inputs = [read(v) for v in eqn.invars]
            params = {k: s for k, v in eqn.params.items() if (s := _simple(v, self.describe)) is not None}
            subs = [s.jaxpr if isinstance(s, core.ClosedJaxpr) else s for s in _sub_programs(eqn.params)]
            node: dict[str, Any] = {"primitive": name, "within": list(within), "params": params}
            if len(subs) == 1 and len(subs[0].invars) == len(eqn.invars) \
                    and len(subs[0].outvars) == len(eqn.outvars):
                inner = subs[0]
                inner_env = {var: outer for var, outer in zip(inner.invars, inputs) if outer is not None}
                for var, produced in zip(eqn.outvars, self.walk(inner, inner_env, within + (name,))):
                    if produced is not None:
                        env[var] = produced
                node.update(inputs=inputs, outputs=[read(v) for v in eqn.outvars], inlined=True)
                self.nodes.append(node)
                continue
            outputs = [read(v) for v in eqn.outvars]
            for inner in subs:
                inner_env: dict[core.Var, int] = {}
                inner_inputs = [self.fresh_into(inner_env, v) for v in inner.invars]
                self.nodes.append({"primitive": f"{name}:enter", "within": list(within), "params": {},
                                   "inputs": inputs, "outputs": inner_inputs, "synthetic": True})
                produced = self.walk(inner, inner_env, within + (name,))
                self.nodes.append({"primitive": f"{name}:exit", "within": list(within), "params": {},
                                   "inputs": produced, "outputs": outputs, "synthetic": True})
            node.update(inputs=inputs, outputs=outputs)
            self.nodes.append(node)
        return [read(v) for v in jaxpr.outvars]

    def fresh_into(self, env: dict[core.Var, int], var: core.Var) -> int:
        env[var] = self.fresh(var)
        return env[var]


def program_of(closed: core.ClosedJaxpr, describe: Describe) -> dict[str, Any]:
    builder = _Builder(describe)
    jaxpr = closed.jaxpr
    env: dict[core.Var, int] = {}
    inputs = [builder.fresh_into(env, v) for v in jaxpr.invars]
    constants = [builder.fresh_into(env, v) for v in jaxpr.constvars]
    outputs = builder.walk(jaxpr, env, ())
    return {"inputs": inputs, "constants": constants, "outputs": outputs, "nodes": builder.nodes,
            "avals": {str(k): v for k, v in builder.avals.items()}}
