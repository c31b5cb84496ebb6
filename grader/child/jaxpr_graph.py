"""Turn JAX programs into plain data the grader can analyse (runs in the child).

Every value gets an integer id; every equation becomes a node with the ids it reads and
writes, its primitive's name, its simple parameters (shardings described as dicts) and the
scalar literals it reads. Calls whose inner program lines up one-to-one with their operands
(``jit``, ``shard_map``, custom derivatives, ...) are inlined, so dataflow follows values
through them; ``within`` says which transformations a node sits in (a ``jit`` of JAX's own
library, such as ``jnp.sum``, is inlined without counting as the student's ``jit``). A ``scan``
is inlined too, each carry linked back from the step's output to its input (a ``scan:carry``
link), so a value reaches the result through later steps as the loop runs it. Any other nested
program (``cond``, ``while``) is linked conservatively: everything it produces may derive from
everything it reads.

The same :class:`Builder` serves the traced program (``program_of`` a ``jax.make_jaxpr``
result) and the program of a real call (``grader.child.recorder``), whose values are the
arrays themselves.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax import Device
from jax._src import core
from jax._src import mesh as mesh_lib
from jax.sharding import AbstractMesh, Mesh, NamedSharding, PartitionSpec, Sharding

from grader.child.jax_version import closed_jaxpr_class
from grader.child.typed import axis_types

Describe = Callable[[Any], dict[str, Any]]
JAX_SOURCE = os.path.dirname(os.path.realpath(jax.__file__)) + os.sep
ClosedJaxpr = closed_jaxpr_class(core)  # JAX 0.12: core.Jaxpr (grader.child.jax_version)


def simple_param(value: Any, describe: Describe, context: Mesh | None = None) -> Any:
    """A JSON-able view of a parameter, or None for the ones that say nothing structural.
    ``context``: the concrete mesh the program runs on (``context_mesh``), which gives an
    abstract mesh its devices."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, np.dtype):  # preferred_element_type, a convert's new_dtype: by name ("bfloat16")
        return str(value)
    if isinstance(value, (Sharding, Device)) or type(value).__name__ == "MemorySpace":
        described = describe(value)
        if isinstance(value, NamedSharding) and isinstance(value.mesh, AbstractMesh) \
                and described.get("mesh_devices", ()) is None:
            described["mesh_devices"] = devices_of(value.mesh, context)
        return described
    if isinstance(value, PartitionSpec):  # shard_map's in_specs/out_specs, in describe()'s spec form
        return [list(p) if isinstance(p, tuple) else (p if p is None or isinstance(p, str) else str(p))
                for p in value]
    if isinstance(value, (Mesh, AbstractMesh)):
        return mesh_data(value, context)
    if type(value).__name__ in ("UnspecifiedValue", "AUTO"):  # jit in/out_shardings left to the compiler
        return {"type": "unspecified"}
    if isinstance(value, (tuple, list)) and len(value) <= 64:
        items = [simple_param(v, describe, context) for v in value]
        return items if all(i is not None or v is None for i, v in zip(items, value)) else None
    return None


def mesh_data(mesh: Mesh | AbstractMesh, context: Mesh | None = None) -> dict[str, Any]:
    """A mesh parameter (shard_map's) in the same terms as a NamedSharding's mesh."""
    return {"type": "Mesh", "mesh_devices": devices_of(mesh, context),
            "mesh_shape": [int(n) for n in dict(mesh.shape).values()],
            "axis_names": [str(a) for a in mesh.axis_names], **axis_types(mesh)}


def devices_of(mesh: Mesh | AbstractMesh, context: Mesh | None) -> list[int] | None:
    """The ids of a mesh's devices, in its order. An abstract mesh (a ``jax.shard_map``
    written without ``mesh=``, a bare PartitionSpec under ``jax.set_mesh``) names only axes
    and sizes: JAX runs it on the concrete mesh set in the context, ``context``, when their
    axes and sizes agree; None where no such mesh is known."""
    try:
        return [int(d.id) for d in mesh.devices.flat]
    except (AttributeError, ValueError):  # an AbstractMesh names no devices
        pass
    try:
        if context is not None and tuple(context.shape_tuple) == tuple(mesh.shape_tuple):
            return [int(d.id) for d in context.devices.flat]
    except (AttributeError, ValueError):  # a mesh rewritten after it was made: nothing to state
        pass
    return None


def context_mesh(params: dict[str, Any] | None = None) -> Mesh | None:
    """The concrete mesh set in the context (``jax.set_mesh``): the one a jitted program was
    traced under (JAX keeps it as the jit's ``ctx_mesh``), or, without ``params``, the one in
    force now; None where none is set."""
    if params is None:
        current = getattr(mesh_lib, "get_concrete_mesh", None)
        found = current() if current is not None else None
    else:
        found = params.get("ctx_mesh")
    return found if isinstance(found, Mesh) and not found.empty else None


def sub_programs(params: dict[str, Any]) -> list[core.Jaxpr | core.ClosedJaxpr]:
    """The programs nested in an equation's parameters (a jit's, a scan's body, a cond's branches)."""
    found = []
    for value in params.values():
        candidates = value if isinstance(value, (tuple, list)) else (value,)
        found.extend(c for c in candidates if isinstance(c, (core.Jaxpr, ClosedJaxpr)))
    return found


def is_library(program: core.Jaxpr | core.ClosedJaxpr) -> bool:
    """A program JAX's own library traced (``jnp.sum`` is a jitted function), not the student."""
    jaxpr = program.jaxpr if isinstance(program, ClosedJaxpr) else program
    source = getattr(getattr(jaxpr, "debug_info", None), "func_src_info", None) or ""
    at = source.rfind(" at ")
    return at >= 0 and _in_jax(source[at + 4:].rsplit(":", 1)[0])


_IN_JAX: dict[str, bool] = {}  # a file -> whether it is JAX's own (a realpath is ~20 us of system calls)


def _in_jax(path: str) -> bool:
    if path not in _IN_JAX:
        _IN_JAX[path] = os.path.realpath(path).startswith(JAX_SOURCE)
    return _IN_JAX[path]


def _literal(atom: Any) -> Any:
    """The value of a scalar literal operand (``div x 8.0``), as a plain number."""
    value = getattr(atom, "val", atom)
    try:
        if getattr(value, "shape", ()) == () and not isinstance(value, (str, bytes)):
            number = value.item() if hasattr(value, "item") else value
            if isinstance(number, (bool, int, float)):
                return number
    except (TypeError, ValueError):
        pass
    return None


def aval_data(like: Any) -> dict[str, Any]:
    """The shape and dtype of ``like`` (a jaxpr variable's aval, or an array), as data."""
    return {"shape": [int(n) for n in getattr(like, "shape", ())], "dtype": str(getattr(like, "dtype", ""))}


def _carries(name: str, params: dict[str, Any]) -> list[tuple[int, int]]:
    """For a ``scan`` (what a ``fori_loop`` with static bounds becomes), each carry's position
    among the body's inputs and among its outputs: a step reads what the step before gave, so a
    value the body computes reaches the result through a later step too (a ring's ppermute)."""
    if name != "scan":
        return []
    consts, carries = int(params.get("num_consts", 0)), int(params.get("num_carry", 0))
    return [(consts + k, k) for k in range(carries)]


class Builder:
    """Numbers values scope by scope: a nested program seen twice (a jitted function called
    twice) gets fresh ids the second time, so dataflow never crosses between the calls."""

    def __init__(self, describe: Describe, context: Mesh | None = None) -> None:
        self.describe = describe
        # The concrete mesh set in the context of what is walked (``context_mesh``): a jitted
        # program's own, else the one in force when the program is built (a global jax.set_mesh)
        self.context = context if context is not None else context_mesh()
        self.avals: dict[int, dict[str, Any]] = {}
        self.nodes: list[dict[str, Any]] = []
        # id of a value placed inside a program (a sharding constraint, a device_put under jit)
        # -> the program's variable that holds it, for a replay of the program with it replaced
        self.placed_inside: dict[int, Any] = {}

    def fresh(self, like: Any) -> int:
        """A new id for a value shaped like ``like`` (a jaxpr variable's aval, or an array)."""
        new_id = len(self.avals)
        self.avals[new_id] = aval_data(like)
        return new_id

    def walk(self, jaxpr: core.Jaxpr, env: dict[core.Var, int], within: tuple[str, ...]) -> list[int | None]:
        """Walk one scope; ``env`` holds the ids of its inputs. Returns the ids of its outputs."""
        def read(atom: Any) -> int | None:
            if isinstance(atom, core.Literal):
                return None
            if atom not in env:
                env[atom] = self.fresh(atom.aval)
            return env[atom]

        for var in jaxpr.constvars:
            read(var)
        for eqn in jaxpr.eqns:
            literals = {i: v for i, atom in enumerate(eqn.invars)
                        if isinstance(atom, core.Literal) and (v := _literal(atom)) is not None}
            outputs = self.equation(eqn.primitive.name, eqn.params, [read(v) for v in eqn.invars],
                                    [v.aval for v in eqn.outvars], within, literals, [v.aval for v in eqn.invars])
            for var, produced in zip(eqn.outvars, outputs):
                if not isinstance(var, core.DropVar):
                    env[var] = produced
                    if eqn.primitive.name in ("sharding_constraint", "reshard", "device_put"):
                        self.placed_inside[produced] = var
        return [read(v) for v in jaxpr.outvars]

    def equation(self, name: str, params: dict[str, Any], inputs: Sequence[int | None], outs: Sequence[Any],
                 within: tuple[str, ...], literals: dict[int, Any] | None = None, reads: Sequence[Any] = ()
                 ) -> list[int]:
        """Add one equation (of a program, or a primitive a real call bound) reading ``inputs``
        (shaped like ``reads`` where it sees them: inside a shard_map body, each device's block)
        and producing values shaped like ``outs``; returns the ids of what it produced."""
        outer = self.context
        self.context = context_mesh(params) or outer
        try:
            return self._equation(name, params, inputs, outs, within, literals, reads)
        finally:
            self.context = outer

    def _equation(self, name: str, params: dict[str, Any], inputs: Sequence[int | None], outs: Sequence[Any],
                  within: tuple[str, ...], literals: dict[int, Any] | None, reads: Sequence[Any]) -> list[int]:
        simple = {k: s for k, v in params.items() if (s := simple_param(v, self.describe, self.context)) is not None}
        subs = sub_programs(params)
        node: dict[str, Any] = {"primitive": name, "within": list(within), "params": simple, "inputs": list(inputs)}
        seen = [aval_data(r) for r in reads]
        # a value entering a shard_map body keeps its id, with its global shape in ``avals``: where
        # an operation reads it otherwise (each device's block), what it reads is kept too
        if any(i is not None and a != self.avals.get(i) for i, a in zip(inputs, seen)):
            node["input_avals"] = seen
        if literals:
            node["literals"] = {str(k): v for k, v in literals.items()}
        if len(subs) == 1:
            inner = subs[0].jaxpr if isinstance(subs[0], ClosedJaxpr) else subs[0]
            if len(inner.invars) == len(inputs) and len(inner.outvars) == len(outs):
                inner_env = {var: outer for var, outer in zip(inner.invars, inputs) if outer is not None}
                carried = _carries(name, params)
                for into, _ in carried:  # a loop's carry: what it starts from, then what the last step gave
                    inner_env[inner.invars[into]] = self.fresh(inner.invars[into].aval)
                scope = within if is_library(subs[0]) else within + (name,)
                produced = [p if p is not None else self.fresh(o) for p, o in
                            zip(self.walk(inner, inner_env, scope), outs)]
                node.update(outputs=produced, inlined=True)
                self.nodes.append(node)
                self.nodes.extend({"primitive": f"{name}:carry", "within": list(within), "params": {},
                                   "inputs": [inputs[into], produced[out]], "outputs": [inner_env[inner.invars[into]]],
                                   "synthetic": True} for into, out in carried)
                return produced
        outputs = [self.fresh(o) for o in outs]
        for sub in subs:
            inner = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub
            inner_env: dict[core.Var, int] = {}
            inner_inputs = [self._fresh_into(inner_env, v) for v in inner.invars]
            self.nodes.append({"primitive": f"{name}:enter", "within": list(within), "params": {},
                               "inputs": list(inputs), "outputs": inner_inputs, "synthetic": True})
            produced = self.walk(inner, inner_env, within + (name,))
            self.nodes.append({"primitive": f"{name}:exit", "within": list(within), "params": {},
                               "inputs": produced, "outputs": outputs, "synthetic": True})
        node["outputs"] = outputs
        self.nodes.append(node)
        return outputs

    def _fresh_into(self, env: dict[core.Var, int], var: core.Var) -> int:
        env[var] = self.fresh(var.aval)
        return env[var]

    def data(self, inputs: list[int], outputs: list[int | None], input_paths: list[str],
             output_paths: list[str], constants: list[int] = ()) -> dict[str, Any]:
        return {"inputs": inputs, "input_paths": input_paths, "constants": list(constants), "outputs": outputs,
                "output_paths": output_paths, "nodes": self.nodes,
                "avals": {str(k): v for k, v in self.avals.items()}}


def program_of(closed: core.ClosedJaxpr, describe: Describe, input_paths: list[str],
               output_paths: list[str]) -> dict[str, Any]:
    """The traced program as data; ``input_paths`` name its inputs (the argument leaves, in
    order), ``output_paths`` its outputs (the returned leaves)."""
    builder = Builder(describe)
    jaxpr = closed.jaxpr
    env: dict[core.Var, int] = {}
    inputs = [builder._fresh_into(env, v) for v in jaxpr.invars]
    constants = [builder._fresh_into(env, v) for v in jaxpr.constvars]
    outputs = builder.walk(jaxpr, env, ())
    return builder.data(inputs, outputs, input_paths, output_paths, constants)
