"""``jaxgrade explain FILE -e SLUG``: what the structure checks observed of a submission's probe
call, the program and the record a ``Predicate`` reads (``grader.checks.predicate.Observed``),
so that an instructor writing a check reads what it will see instead of writing a check that
fails to find out. The submission runs as in grading: in the sandboxed child, with the
exercise's devices, limits and probe.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from grader.authoring.exercise import Exercise, hidden_from_child
from grader.checks.base import Context
from grader.checks.predicate import Observed, observe
from grader.observe.program import Node, Program
from grader.observe.session import Session


def explain(exercise: Exercise, submission: Path) -> Observed | str:
    """Run ``submission``'s probe call for ``exercise`` and observe it as the structure checks
    do; a str says why it could not be observed (it did not load, it raised...)."""
    session = Session(Path(submission), exercise.function, (), exercise.devices, exercise.limits,
                      hide=hidden_from_child(exercise))
    try:
        signature = exercise.signature
        session.parameters, session.factory = signature.names, signature.factory
        loaded = session.load()
        if not loaded.ok:
            return f"the file does not load: {loaded.detail}"
        module = submission.stem if submission.stem.isidentifier() else "submission"
        return observe(Context(session, signature, exercise.probe, 0, exercise.function, module, exercise.devices))
    finally:
        session.close()


def plain(value: Any) -> Any:
    """``value`` as JSON data: dataclasses as objects, arrays as their dtype, shape and (small
    ones) values, tuples as lists, other objects by name."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {**data, "operation": value.operation} if isinstance(value, Node) else data
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        data = {"dtype": str(value.dtype), "shape": list(value.shape)}
        return {**data, "values": value.astype(np.float64).tolist()} if value.size <= 16 and \
            value.dtype.kind in "biuf" else data
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return type(value).__name__


def as_json(observed: Observed) -> str:
    """Every field of ``observed`` (docs/authoring.md, "What a predicate reads"), as JSON."""
    return json.dumps(plain(observed), indent=1, default=str)


def _aval(program: Program, value: int | None, read: tuple[int, ...] | None = None) -> str:
    if value is None:
        return "literal"
    shape = read if read is not None else program.shapes.get(value, ())
    return f"%{value}:{(program.dtypes or {}).get(value, '?')}{list(shape)}"


def _node(program: Program, index: int, node: Node) -> str:
    meaning = f" (by meaning: {node.operation})" if node.operation != node.primitive else ""
    shapes = program.read_shapes(node)
    reads = ", ".join(_aval(program, v, s if node.input_avals is not None else None)
                      for v, s in zip(node.inputs, shapes))
    gives = ", ".join(_aval(program, v) for v in node.outputs)
    where = f"  within {'/'.join(node.within)}" if node.within else ""
    flags = "  [inlined: the body's nodes above stand in for it]" if node.inlined else ""
    params = {k: v for k, v in node.params.items() if k not in ("jaxpr", "mesh", "ctx_mesh")}
    shown = f"  params {json.dumps(plain(params), default=str)[:300]}" if params else ""
    return f"  [{index}] {node.primitive}{meaning}{where}{flags}\n        reads {reads or '-'} -> {gives or '-'}{shown}"


def _program(title: str, program: Program | None) -> list[str]:
    if program is None:
        return [f"{title}: none (it could not be traced)"]
    lines = [f"{title}: {len(program.nodes)} nodes; inputs "
             + ", ".join(f"{p} = {_aval(program, i)}" for p, i in zip(program.input_paths, program.inputs))
             + "; outputs " + ", ".join(f"{p} = {_aval(program, i)}"
                                        for p, i in zip(program.output_paths, program.outputs))]
    return lines + [_node(program, i, n) for i, n in enumerate(program.nodes)]


def as_text(observed: Observed) -> str:
    """What the checks read, for a person: the returned leaves, the program the call ran (each
    node as a ``Predicate`` sees it), what was placed, the jitted calls and what XLA ran."""
    returned = observed.returned
    lines = ["Returned leaves (seen.returned.leaves):"]
    lines += [f"  {leaf.path}: {leaf.kind} {leaf.dtype}{list(leaf.shape or ())} sharding "
              f"{json.dumps(plain(leaf.sharding), default=str)}" for leaf in returned.leaves]
    lines += ["", *_program("The call's program (seen.program)", observed.program), ""]
    lines += ["Placements (seen.placements):"]
    lines += [f"  {p.via}: {json.dumps(plain(p.sharding), default=str)} relation {plain(p.relation)} "
              f"within {'/'.join(p.within) or '-'}" for p in observed.placements] or ["  none"]
    lines += ["", "Jitted calls (seen.returned.jit_calls):"]
    lines += [f"  {c.function}: {c.status}, {c.compiles} compilation(s)" for c in returned.jit_calls] or ["  none"]
    lines += ["", "XLA programs (seen.returned.programs):"]
    for program in returned.programs:
        moved = "; ".join(f"{c.kind} {c.bytes} B x{c.times}" for c in program.collectives) or "no collective"
        lines.append(f"  {program.function} ({'own' if program.own else 'not own'}), {program.runs} run(s): "
                     f"{moved}; memory {plain(program.memory)}")
    if not returned.programs:
        lines.append("  none")
    lines += ["", "Host work (seen.returned.host):"]
    lines += [f"  {h.kind}: {h.call}" for h in returned.host] or ["  none"]
    lines += ["", *_program("What jax.make_jaxpr traced (seen.traced)", observed.traced)]
    return "\n".join(lines) + "\n"


def _explain(args: Any) -> int:
    from grader.authoring.exercise import exercise_for_source, find_exercise
    from grader.errors import ExitCode, UsageError

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{path}: no such file; give the solution file to explain")
    exercise = find_exercise(args.exercise) if args.exercise else exercise_for_source(path.read_text())
    if exercise is None:
        raise UsageError(f"{path}: name the exercise with -e SLUG (its function names no one exercise)")
    observed = explain(exercise, path)
    if isinstance(observed, str):
        print(f"jaxgrade: the structure checks observe nothing of {path}: {observed}")
        return ExitCode.NOT_ALL
    print(as_json(observed) if args.json else as_text(observed), end="" if not args.json else "\n")
    return ExitCode.OK


def add_commands(commands: Any) -> None:
    """Register ``jaxgrade explain`` on the CLI's subcommand parsers."""
    command = commands.add_parser("explain", help="show what the structure checks observe of a solution's probe "
                                                  "call: the program and the record a Predicate reads")
    command.add_argument("file", help="a solution .py file (the reference, a variant, a student's)")
    command.add_argument("-e", "--exercise", help="exercise slug (default: found from the function the file defines)")
    command.add_argument("--json", action="store_true",
                         help="every field a Predicate reads, as JSON (docs/authoring.md), instead of text")
    command.set_defaults(run=_explain)
