"""``AnyOf``: one target, several correct routes, judged by real gradings of scan_not_loop, whose
loop may be a scan or a while loop (``structure.uses_loop``, ``structure.loop_reads_xs``).

A copy of the exercise withholds one of its two AnyOf checks, so points, hints, the result
object, the renderers and the withheld-check rules are all exercised on the combinator."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from grader.arguments import Array, Signature
from grader.checks import AnyOf, Context, NamedShardingTarget, PlacedOnNamedSharding, UsesPrimitive
from grader.checks.compilation import CompilesAtMost
from grader.checks.returns import Returns
from grader.engine import grade
from grader.authoring.exercise import find_exercise, load_exercise
from grader.observe.session import Session
from grader.report.render import render
from grader.sandbox.limits import Limits

SLUG = "scan_not_loop"
REPO = Path(__file__).resolve().parent.parent
SCAN = UsesPrimitive(id="structure.loop.scan", title="a jax.lax.scan", operation="scan")
WHILE = UsesPrimitive(id="structure.loop.while", title="a jax.lax.while_loop", operation="while")


@pytest.fixture(scope="module")
def exercise(tmp_path_factory):
    """scan_not_loop with ``structure.loop_reads_xs`` hidden from students."""
    from grader.authoring.export import copy_exercise
    directory = copy_exercise(find_exercise(SLUG), tmp_path_factory.mktemp("exercises") / SLUG)
    with open(directory / "exercise.toml", "a") as handle:
        handle.write('\n[visibility]\n"structure.loop_reads_xs" = "hidden"\n')
    return load_exercise(directory)


@pytest.fixture(scope="module")
def reports(exercise, tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    crash = folder / "crash.py"
    crash.write_text("def decayed_sum(xs, a):\n    raise ValueError('not yet')\n")
    paths = {"scan": REPO / "exercises" / SLUG / "reference.py",
             "while": REPO / "exercises" / SLUG / "right" / "while_loop.py",
             "python_loop": REPO / "exercises" / SLUG / "wrong" / "structure_python_loop.py", "crash": crash}
    return {name: grade(exercise, path) for name, path in paths.items()}


def _check(report, check_id):
    return next(c for c in report.checks if c.id == check_id)


@pytest.mark.slow
def test_either_route_earns_the_points_and_names_the_route_taken(reports) -> None:
    for route, title in (("scan", "A jax.lax.scan"), ("while", "A jax.lax.while_loop")):
        loop = _check(reports[route], "structure.uses_loop")
        assert loop.status == "passed" and loop.score == loop.max_score == 2, loop.message
        assert loop.message.startswith(f"{title} (one of the 2 accepted routes to run the recurrence"), loop.message
        assert loop.hint is None
        assert _check(reports[route], "structure.loop_reads_xs").status == "passed"
        assert reports[route].status == "passed"


@pytest.mark.slow
def test_no_route_taken_names_what_each_route_needed_and_saw(reports) -> None:
    loop = _check(reports["python_loop"], "structure.uses_loop")
    assert loop.status == "failed" and loop.score == 0 and loop.max_score == 2
    assert "None of the 2 accepted routes to run the recurrence as one loop JAX sees is taken" in loop.message
    assert "(1) A jax.lax.scan: Your program never uses jax.lax.scan" in loop.message
    assert "(2) A jax.lax.while_loop: Your program never uses jax.lax.while_loop" in loop.message
    assert " or a jax.lax.while_loop (" in loop.expected
    # what each route observed: the program's operations, counted, not only "no scan"
    assert "a jax.lax.scan: no jax.lax.scan among the program's" in loop.observed
    assert "a jax.lax.while_loop: no jax.lax.while_loop" in loop.observed and " mul" in loop.observed
    assert loop.hint and loop.hint.startswith("jax.lax.scan(step, 0.0, xs)")  # the AnyOf's own hint


@pytest.mark.slow
def test_a_submission_that_never_answers_is_said_once_not_per_route(reports) -> None:
    loop = _check(reports["crash"], "structure.uses_loop")
    assert loop.status == "failed" and loop.message.count("raised ValueError") == 1, loop.message
    assert "(1)" not in loop.message


@pytest.mark.slow
def test_a_withheld_anyof_stays_withheld_in_every_rendering(reports) -> None:
    report = reports["python_loop"]
    hidden = _check(report, "structure.loop_reads_xs")
    assert hidden.visibility == "hidden" and hidden.status == "failed"
    for audience in ("student", "instructor"):
        text = render(report, "text", audience=audience)
        assert ("The loop runs over xs itself, one step per element" in text) == (audience == "instructor"), audience
        assert "None of the 2 accepted routes to run the recurrence" in text  # the shown AnyOf
    student = render(report, "md")
    assert "The loop runs over xs itself" not in student and "a jax.lax.scan: no jax.lax.scan" in student
    record = json.loads(render(report, "json"))  # the full record: every check, with its points
    shown = next(c for c in record["checks"] if c["id"] == "structure.uses_loop")
    assert shown["status"] == "failed" and shown["max_score"] == 2 and shown["hint"].startswith("jax.lax.scan(")
    assert "None of the 2 accepted routes" in render(report, "html", audience="instructor")


def test_declaration_mistakes_are_reported_by_problems() -> None:
    signature, probe = Signature({"x": Array("float32", "n")}), {}
    assert AnyOf(SCAN, WHILE, id="structure.loop", title="One loop").problems(signature, probe) == []
    mixed = AnyOf(SCAN, Returns(id="type.r", title="r"), id="structure.loop", title="t").problems(signature, probe)
    assert any("must share a category" in p for p in mixed)
    assert any("at least two routes" in p for p in AnyOf(SCAN, id="structure.loop", title="t").problems(signature,
                                                                                                        probe))
    once = AnyOf(SCAN, CompilesAtMost(id="structure.c", title="c"), id="structure.loop", title="t")
    assert any("judged once" in p for p in once.problems(signature, probe))
    same = AnyOf(SCAN, SCAN, id="structure.loop", title="t").problems(signature, probe)
    assert any("title of its own" in p for p in same)
    reads = UsesPrimitive(id="structure.r", title="reads y", operation="scan", reads="y")
    assert any("reads='y' names no parameter" in p
               for p in AnyOf(SCAN, reads, id="structure.loop", title="t").problems(signature, probe))
    with pytest.raises(TypeError, match="routes as checks"):
        AnyOf("scan", id="structure.loop", title="t")


def test_the_category_and_description_come_from_the_routes_and_title() -> None:
    either = AnyOf(SCAN, WHILE, id="structure.loop", title="The recurrence is one loop")
    assert either.category == "structure" and not either.judged_once
    assert either.description == "the recurrence is one loop"
    renamed = either.for_function("decayed_sum", Signature({"x": Array("float32", "n")}))
    assert renamed.alternatives == (SCAN, WHILE) and renamed.id == "structure.loop"


def test_exercise_checks_source_keeps_anyof_as_one_entry_for_the_student_export() -> None:
    from grader.authoring.export.student import visible_checks_source
    source = textwrap.dedent('''
        from grader.authoring import AnyOf, UsesPrimitive, WithinLimits
        CHECKS = [
            AnyOf(UsesPrimitive(id="structure.a.scan", title="a scan", operation="scan"),
                  UsesPrimitive(id="structure.a.while", title="a while", operation="while"),
                  id="structure.a", title="One loop"),
            WithinLimits(id="limits.resources", title="Limits"),
        ]
    ''')
    kept = visible_checks_source(source, {"limits.resources"}, "checks.py")
    assert "AnyOf" not in kept and "WithinLimits" in kept
    assert "structure.a.while" in visible_checks_source(source, {"structure.a", "limits.resources"}, "checks.py")


HEADER = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
"""


def _judged(tmp_path: Path, body: str, *checks):
    """Each of ``checks`` judged in turn on one session of a real child (8 devices), as the
    engine judges an exercise's checks: they share what the probe call observed."""
    path = tmp_path / "case.py"
    path.write_text(HEADER + "\n\n" + textwrap.dedent(body))
    session = Session(path, "f", ("x",), 8, Limits(call_s=20, total_s=60))
    try:
        assert session.load().ok, session.load().detail
        context = Context(session, Signature({"x": Array("float32", (16,))}), {"x": np.arange(16, dtype=np.float32)},
                          0, "f", path.stem, 8)
        return [check.judge(context) for check in checks]
    finally:
        session.close()


def _gathered(via: str, title: str):
    target = NamedShardingTarget(axis_names=("data",), spec=(), via=via, operand="x",
                                 match="exact" if via == "device_put" else "derived",
                                 inside="jit" if via == "constraint" else None)
    return PlacedOnNamedSharding(id=f"structure.gathered.{via}", title=title, target=target)


GATHERED = AnyOf(_gathered("device_put", "x replicated by jax.device_put"),
                 _gathered("constraint", "a value of x replicated by a sharding constraint inside jax.jit"),
                 id="structure.gathered", title="x is gathered onto every device", description="gather x")


@pytest.mark.slow
def test_placement_routes_pass_by_either_way_of_placing(tmp_path) -> None:
    by_constraint, = _judged(tmp_path, """
        @jax.jit
        def f(x):
            return jnp.sum(jax.lax.with_sharding_constraint(x * 2, NamedSharding(MESH, P())))
    """, GATHERED)
    assert by_constraint.status == "passed", by_constraint.message
    assert by_constraint.message.startswith("A value of x replicated by a sharding constraint inside jax.jit (one of")


@pytest.mark.slow
def test_a_route_not_taken_leaves_no_trace_a_later_check_would_point_to(tmp_path) -> None:
    """The placement checks explain a missing placement once, then point to the check that did:
    a route is no check of the report, so a later check explains in full, never '(see “x
    replicated by jax.device_put”)'."""
    later = _gathered("device_put", "Places x with jax.device_put")
    routes, after = _judged(tmp_path, """
        def f(x):
            return jnp.sum(x)
    """, GATHERED, later)
    assert routes.status == after.status == "failed"
    assert "(1) X replicated by jax.device_put: No jax.device_put of x happened" in routes.message, routes.message
    assert "(2) A value of x replicated by a sharding constraint" in routes.message
    assert after.message.startswith("No jax.device_put of x happened"), after.message
    assert "see “" not in after.message
