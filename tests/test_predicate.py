"""``Predicate``: the exercise's own test over the probe call's observations, judged by real
gradings of a copy of scan_not_loop with predicates added to its checks.

A predicate that holds passes, one that does not fails with its own words (an Outcome's
observed line), and one that raises, or answers neither True, False nor an Outcome, is the
exercise's error (status ``error``), never the student's failure. A submission whose call
could not be observed fails before the predicate runs (so a predicate that would raise on
it is not blamed on the exercise)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import exercise_with_checks

from grader.authoring import Observed
from grader.checks import Predicate
from test_program_checks import judge  # noqa: F401 (the fixture: a check judged on a real child's call)
from grader.engine import grade
from grader.report.render import render

SLUG = "scan_not_loop"
REPO = Path(__file__).resolve().parent.parent
PREDICATES = '''

from grader.authoring import AnyOf, Observed, Outcome, Predicate


def _scans_every_element(seen: Observed):
    lengths = [node.params.get("length") for node in seen.program.uses("scan")]
    wanted = seen.probe["xs"].shape[0]
    if wanted in lengths:
        return Outcome.passed(f"Your scan runs {wanted} steps, one per element.")
    return Outcome.failed("Your program has no scan over every element of xs.",
                          expected=f"a scan of length {wanted}", observed=f"scans of lengths {lengths}")


def _returns_a_scalar(seen: Observed):
    return seen.returned.leaf("result").shape == ()


def _instructors_mistake(seen: Observed):
    return seen.program.nodes[10 ** 6]


def _no_verdict(seen: Observed):
    return "yes"


CHECKS[-1:-1] = [
    Predicate(_scans_every_element, "the program scans over every element of xs", id="structure.scan_length",
              hint="Scan over xs itself."),
    Predicate(_returns_a_scalar, "the result is a scalar", id="structure.scalar_result",
              title="Returns a scalar (the exercise's own test)"),
    Predicate(_instructors_mistake, "an instructor's mistake", id="structure.broken", hint="never shown"),
    Predicate(_no_verdict, "a predicate that answers a string", id="structure.no_verdict"),
    AnyOf(Predicate(_instructors_mistake, "a route that raises", id="structure.either.broken"),
          UsesPrimitive(id="structure.either.scan", title="a jax.lax.scan", operation="scan"),
          id="structure.either", title="A scan, or the broken route"),
]
'''
POINTS = ('"structure.scan_length" = 2\n"structure.scalar_result" = 1\n"structure.broken" = 1\n'
          '"structure.no_verdict" = 1\n"structure.either" = 1\n')


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    exercise = exercise_with_checks(SLUG, PREDICATES, POINTS, tmp_path_factory.mktemp("exercises"))
    crash = tmp_path_factory.mktemp("submissions") / "crash.py"
    crash.write_text("def decayed_sum(xs, a):\n    raise ValueError('not yet')\n")
    paths = {"reference": REPO / "exercises" / SLUG / "reference.py",
             "python_loop": REPO / "exercises" / SLUG / "wrong" / "structure_python_loop.py", "crash": crash}
    return {name: grade(exercise, path) for name, path in paths.items()}


@pytest.fixture(scope="module")
def reports(graded):
    return {name: {c.id: c for c in report.checks} for name, report in graded.items()}


@pytest.mark.slow
def test_a_predicate_that_holds_passes_with_its_points(reports) -> None:
    scan, scalar = reports["reference"]["structure.scan_length"], reports["reference"]["structure.scalar_result"]
    assert scan.status == "passed" and scan.score == 2 and scan.message == "Your scan runs 9 steps, one per element."
    assert scalar.status == "passed" and scalar.score == 1
    assert scalar.title == "Returns a scalar (the exercise's own test)"
    assert scalar.message == "True of your function: the result is a scalar."


@pytest.mark.slow
def test_a_predicate_that_fails_says_what_it_observed(reports) -> None:
    scan = reports["python_loop"]["structure.scan_length"]
    assert scan.status == "failed" and scan.score == 0
    assert scan.expected == "a scan of length 9" and scan.observed == "scans of lengths []"
    assert scan.hint == "Scan over xs itself." and scan.title == "The program scans over every element of xs"


@pytest.mark.slow
def test_the_json_record_carries_a_predicates_expected_and_observed_lines(graded) -> None:
    data = json.loads(render(graded["python_loop"], "json"))
    scan = next(c for c in data["checks"] if c["id"] == "structure.scan_length")
    assert (scan["expected"], scan["observed"], scan["hint"]) == (
        "a scan of length 9", "scans of lengths []", "Scan over xs itself.")


@pytest.mark.slow
def test_a_predicate_that_raises_is_the_exercises_error_not_the_students(reports) -> None:
    for name in ("reference", "python_loop"):
        broken = reports[name]["structure.broken"]
        assert broken.status == "error" and broken.score == 0 and broken.hint is None
        assert broken.message.startswith("The exercise's check raised IndexError: tuple index out of range "
                                         "(in _instructors_mistake at checks.py:"), broken.message
        assert "not in your submission" in broken.message
        answer = reports[name]["structure.no_verdict"]
        assert answer.status == "error" and "returned str, not True, False or an Outcome" in answer.message


@pytest.mark.slow
def test_a_raising_route_of_anyof_errs_only_when_no_other_route_passes(reports) -> None:
    passed = reports["reference"]["structure.either"]
    assert passed.status == "passed" and passed.message.startswith("A jax.lax.scan (one of the 2 accepted routes")
    erred = reports["python_loop"]["structure.either"]
    assert erred.status == "error" and "The exercise's check raised IndexError" in erred.message
    assert erred.message.startswith("A route that raises, one of the routes to a scan, or the broken route:")


@pytest.mark.slow
def test_a_call_that_could_not_be_observed_fails_before_the_predicate_runs(reports) -> None:
    for check_id in ("structure.broken", "structure.scan_length", "structure.no_verdict"):
        outcome = reports["crash"][check_id]
        assert outcome.status == "failed" and "raised ValueError: not yet" in outcome.message, outcome.message
        assert outcome.hint is None


def test_a_predicate_must_be_a_function() -> None:
    with pytest.raises(TypeError, match="must be a function of the observations"):
        Predicate("len(program) > 3", "a string is not a test", id="structure.s")
    assert Predicate(bool, "the call returned", id="structure.b").title == "The call returned"


def _compressed_psum(seen: Observed):
    """What an instructor checking a bfloat16-compressed psum reads: the operation by meaning (a
    psum is psum_invariant under check_vma), the dtype it sums, the block it reads on one device."""
    psums = seen.program.uses("psum")
    return [(n.primitive, n.operation, seen.program.dtypes[n.inputs[0]], seen.program.read_shapes(n)[0],
             seen.program.shapes[n.inputs[0]]) for n in psums]


@pytest.mark.slow
def test_a_predicate_reads_operations_by_meaning_their_dtypes_and_the_blocks_a_shard_map_body_reads(judge):
    seen: list = []
    outcome = judge(Predicate(lambda observed: seen.append(_compressed_psum(observed)) or True,
                              "the psum sums bfloat16", id="structure.compressed"), """
        def f(x):
            body = lambda b: jax.lax.psum(b.astype(jnp.bfloat16), "data").astype(jnp.float32)
            return jax.shard_map(lambda b: body(b), mesh=MESH, in_specs=P("data"), out_specs=P())(x)
    """)
    assert outcome.status == "passed", outcome.message
    assert seen == [[("psum_invariant", "psum", "bfloat16", (2,), (2,))]], seen


@pytest.mark.slow
def test_a_value_entering_a_shard_map_body_is_read_as_each_devices_block(judge):
    seen: list = []
    judge(Predicate(lambda observed: seen.append([(n.primitive, observed.program.read_shapes(n),
                                                   [observed.program.shapes[i] for i in n.inputs])
                                                  for n in observed.program.uses("reduce_sum")]) or True,
                    "sums blocks", id="structure.blocks"), """
        def f(x):
            return jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), "data"), mesh=MESH,
                                 in_specs=P("data"), out_specs=P())(x)
    """)
    assert seen == [[("reduce_sum", [(2,)], [(16,)])]], seen
