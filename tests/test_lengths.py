"""``LoopLength`` (``grader.checks.lengths``): a scan's length as a function of the inputs,
judged by real gradings of a copy of scan_not_loop with the check added.

A scan over xs, and a fori_loop up to ``xs.shape[0]``, pass: their length follows xs. A
fori_loop up to the probe's own length passes on the probe and fails on an input twice as
long; a loop over a fixed padded length fails on the probe; a Python loop has no scan at all.
The length may be given as (leaf, axis) or as a function of the arguments."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import exercise_with_checks

from grader.arguments import Array, Scalar, Signature
from grader.checks.lengths import LoopLength, WhileReads
from grader.engine import grade

SLUG = "scan_not_loop"
REPO = Path(__file__).resolve().parent.parent
ADDED = '''

from grader.authoring import LoopLength

CHECKS[-1:-1] = [
    LoopLength(id="structure.length", title="The loop runs once per element of xs", of=("xs", 0), reads="xs",
               hint="Scan over xs itself, or loop up to xs.shape[0]."),
    LoopLength(id="structure.length_function", title="The loop's length is the number of elements",
               length=lambda a: len(a["xs"]), vary={"xs": 0}),
]
'''
POINTS = '"structure.length" = 2\n"structure.length_function" = 1\n'
PROBE_LENGTH = '''import jax
import jax.numpy as jnp


def decayed_sum(xs, a):
    # 9: the length of the input this was tried on
    return jax.lax.fori_loop(0, 9, lambda i, h: a * h + xs[i], jnp.float32(0))
'''


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    exercise = exercise_with_checks(SLUG, ADDED, POINTS, tmp_path_factory.mktemp("exercises"))
    literal = tmp_path_factory.mktemp("submissions") / "probe_length.py"
    literal.write_text(PROBE_LENGTH)
    here = REPO / "exercises" / SLUG
    paths = {"reference": here / "reference.py", "fori_loop": here / "right" / "fori_loop.py",
             "probe_length": literal, "padded": here / "wrong" / "structure_padded_loop_in_fori.py",
             "python_loop": here / "wrong" / "structure_python_loop.py",
             "while_loop": here / "right" / "while_loop.py",
             "padded_while": here / "wrong" / "structure_padded_while_loop.py"}
    return {name: {c.id: c for c in grade(exercise, path).checks} for name, path in paths.items()}


@pytest.mark.slow
def test_a_loop_over_xs_follows_its_length(reports) -> None:
    for name in ("reference", "fori_loop"):
        for check_id in ("structure.length", "structure.length_function"):
            length = reports[name][check_id]
            assert length.status == "passed", (name, check_id, length.message)
        assert reports[name]["structure.length"].message == (
            "Your program runs a jax.lax.scan of 9 steps reading xs, and 18 when xs (axis 0) is twice as long.")


@pytest.mark.slow
def test_a_length_taken_from_the_probe_does_not_follow(reports) -> None:
    for check_id in ("structure.length", "structure.length_function"):
        length = reports["probe_length"][check_id]
        assert length.status == "failed" and length.score == 0, length.message
        assert length.message.startswith("Your loop's length does not follow the input: 9 steps on the probe, but 9 "
                                         "when xs (axis 0) is twice as long, where the task's loop has 18."), \
            length.message
    assert reports["probe_length"]["structure.length"].hint == "Scan over xs itself, or loop up to xs.shape[0]."


@pytest.mark.slow
def test_a_fixed_length_or_no_scan_fails_on_the_probe(reports) -> None:
    padded = reports["padded"]["structure.length"]
    assert padded.status == "failed", padded.message
    assert padded.message == "Your program runs jax.lax.scan of length 36 reading xs; on these inputs the task's " \
                             "loop has 9 steps.", padded.message
    loop = reports["python_loop"]["structure.length"]
    assert loop.status == "failed" and loop.observed == "no jax.lax.scan reading xs", loop.observed


@pytest.mark.slow
def test_a_while_loop_passes_over_xs_as_it_is_and_fails_over_a_padding(reports) -> None:
    """scan_not_loop's own ``structure.loop_reads_xs``: a scan of xs's length (LoopLength) or a
    while loop reading xs as it is (WhileReads)."""
    honest = reports["while_loop"]["structure.loop_reads_xs"]
    assert honest.status == "passed", honest.message
    assert "jax.lax.while_loop (or jax.lax.fori_loop with traced bounds) reading xs as it is, (9,)" in honest.message
    padded = reports["padded_while"]["structure.loop_reads_xs"]
    assert padded.status == "failed" and padded.score == 0, padded.message
    assert "reading only values of shape (64,) computed from xs; the task's loop reads xs as it is, (9,)" \
        in padded.message, padded.message
    assert reports["python_loop"]["structure.loop_reads_xs"].status == "failed"


def test_a_declaration_that_cannot_work_is_reported() -> None:
    import numpy as np
    signature = Signature({"xs": Array("float32", "n"), "a": Scalar("float32")}, returns=Array("float32", ()))
    probe = {"xs": np.zeros(9, np.float32), "a": 0.5}
    assert LoopLength(id="s.l", title="t", of=("xs", 0)).problems(signature, probe) == []
    assert LoopLength(id="s.l", title="t").problems(signature, probe)[0].startswith("s.l: give of=(leaf, axis)")
    assert any("no axis of the probe" in p for p in LoopLength(id="s.l", title="t", of=("xs", 1)).problems(
        signature, probe))
    assert any("the length function fails" in p for p in LoopLength(
        id="s.l", title="t", length=lambda a: a["ys"], vary={"xs": 0}).problems(signature, probe))
    assert WhileReads(id="s.w", title="t", reads="xs").problems(signature, probe) == []
    assert WhileReads(id="s.w", title="t", reads="ys").problems(signature, probe) == [
        "s.w: 'ys' is no leaf of the probe's arguments"]


def test_loops_run_once_reads_sibling_loops_and_leaves_nested_ones_to_their_outer_loop() -> None:
    """``grader.child.compiled.loops_run_once`` on XLA's own text: ``LoopRuns`` reads these trip
    counts, so a loop of k steps kept alive beside a loop of 64 shows both, and a loop over each
    microbatch's rows inside the loop over the microbatches shows only the outer one."""
    import jax
    import jax.numpy as jnp

    from grader.child.compiled import loops_run_once

    def siblings(xs):
        idle, _ = jax.lax.scan(lambda c, x: (c + 0.0 * x.sum(), None), 0.0, xs)
        return jax.lax.fori_loop(0, 64, lambda i, c: c + xs[i % xs.shape[0]].sum(), idle)

    def nested(xs):
        def row(total, r):
            return total + r.sum(), None

        def microbatch(total, x):
            return total + jax.lax.scan(row, 0.0, x)[0], None
        return jax.lax.scan(microbatch, 0.0, xs)[0]

    xs = jnp.ones((6, 32, 8))
    text = {f.__name__: jax.jit(f).lower(xs).compile().as_text() for f in (siblings, nested)}
    assert sorted(loops_run_once(text["siblings"])) == [6, 64]
    assert loops_run_once(text["nested"]) == [6]


def test_loops_run_once_lists_a_loop_of_unknown_length_inside_a_loop_of_known_length() -> None:
    """Issue #64: a ``while_loop`` the data ends, in a scan's body, was left to the scan, whose
    count says nothing of it; it is listed as None beside the scan's 6 steps."""
    import jax
    import jax.numpy as jnp

    from grader.child.compiled import loops_run_once

    def until_data_says(xs):
        def microbatch(total, x):
            stop = 2 + (jnp.sum(x) * 0).astype(jnp.int32)
            return jax.lax.while_loop(lambda s: s[0] < stop, lambda s: (s[0] + 1, s[1] + x.sum()), (0, total))[1], None
        return jax.lax.scan(microbatch, 0.0, xs)[0]

    text = jax.jit(until_data_says).lower(jnp.ones((6, 32, 8))).compile().as_text()
    assert sorted(loops_run_once(text), key=str) == [6, None]
