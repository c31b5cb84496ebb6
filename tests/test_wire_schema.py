"""A reply that is not what its request asked for is the submission's doing (issue #55 point 6).

Every reply the child sends is checked against its schema (``grader.wire.REPLIES``: the typed
replies of grader/wire.py) where the parent decodes it. Here real honest replies, recorded from
a real child once, are forged every way a submission writing to its own channel can: a field
dropped or added, a value of another JSON type at any depth, another request's reply. Each forged
reply is decoded by the real parent side (``decode_message``, ``Session``) and graded by the real
engine and checks: no check may end in the grader's error ("not your fault", exit 3) and nothing
may escape (exit 4); a reply the schema refuses is a "protocol" incident, the student's failure.
Only the child's process is stood in for, by one that replays the recorded replies.
"""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from grader import engine, find_exercise
from grader.errors import Malformed
from grader.authoring.exercise import Exercise
from grader.observe.session import Session
from grader.wire import HEADER, REPLIES, check_schema, decode_message, frame

REPO = Path(__file__).resolve().parent.parent
HOSTILE = Path(__file__).resolve().parent / "hostile"
# The seed exercise (eager placements), and one whose replies hold jitted calls, compilations and
# compiled programs with their collectives.
EXERCISES = ("named_sharding_replicated", "shard_map_psum")


def _kind(message: dict[str, Any]) -> str:
    """Which recorded reply answers a request: its op, and a call's record mode."""
    return f"call:{message.get('mode', 'placements')}" if message["op"] == "call" else message["op"]


class Recording(Session):
    """A real session that keeps the first reply of each kind its real child sends."""
    replies: dict[str, dict[str, Any]]

    def _request(self, message: dict[str, Any], during: str) -> dict[str, Any]:
        reply = super()._request(message, during)
        self.replies.setdefault(_kind(message), copy.deepcopy(reply))
        return reply


@pytest.fixture(scope="module", params=EXERCISES)
def honest(request: pytest.FixtureRequest) -> tuple[Exercise, dict[str, dict[str, Any]]]:
    """An exercise, and the replies a real child gives its reference solution: load, a call of
    each record mode, a trace, and a refusal (the grader's code failing in the child)."""
    exercise = find_exercise(request.param)
    session = Recording(exercise.reference, exercise.function, exercise.signature.names, exercise.devices,
                        exercise.limits)
    session.replies = {}
    try:
        assert session.load().ok
        session.call(exercise.probe, record="full")  # first: it compiles
        session.call(exercise.probe)
        session.trace(exercise.probe)
    finally:
        session.close()
    return exercise, {**session.replies,
                      "refused": {"ok": False, "internal": True, "error": "grader error: OSError: boom"}}


class Replaying:
    """Stands in for the child's process: answers each request with the recorded reply of its
    kind (``forged`` in place of one kind), through the real decoding of the channel's bytes."""

    def __init__(self, replies: dict[str, dict[str, Any]], forged: tuple[str, Any], workdir: Path) -> None:
        self.replies, self.forged, self.workdir = replies, forged, str(workdir)
        self.ready = {"op": "ready", "jax": "0", "devices": [f"cpu:{i}" for i in range(8)], "platform": "cpu",
                      "protections": {}, "memory_limit": 4 << 30}
        self.protections: dict[str, Any] = {}
        self.greeted_at = self.spawned_at = None

    def request(self, message: dict[str, Any], timeout: float, during: str, keep: Any = None) -> Any:
        kind = _kind(message)
        reply = self.forged[1] if kind == self.forged[0] else self.replies[kind]
        return decode_message(bytearray(frame(reply)[HEADER.size:]), keep)

    def close(self, settle: bool = True) -> dict[str, Any]:
        return {"head": "", "tail": "", "total_bytes": 0, "dropped_bytes": 0}


def replaying_session(replies: dict[str, dict[str, Any]], forged: tuple[str, Any], folder: Path) -> type[Session]:
    """A Session whose every child (a new one after each incident) replays ``replies``."""
    class Replayed(Session):
        def start(self) -> Any:
            if self._child is None:
                workdir = folder / str(len(list(folder.iterdir())))
                workdir.mkdir()
                self._child = Replaying(replies, forged, workdir)
            return self._child
    return Replayed


def _places(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every value inside ``value`` (a reply), the reply itself first."""
    yield at
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        yield from _places(inner, (*at, key))


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


OTHER_VALUES = (0, -3, 2.5, "", "x", True, False, None, [], [1, "a"], {}, {"a": 1}, {"ok": True})


@st.composite
def forgeries(draw: st.DrawFn, replies: dict[str, dict[str, Any]]) -> tuple[str, Any]:
    """A recorded reply's kind and a forged reply for it: a field dropped, a field added, a value
    of another JSON type at any depth, or the reply of another kind of request."""
    kind = draw(st.sampled_from(sorted(k for k in replies if k != "refused")))
    reply = copy.deepcopy(replies[kind])
    how = draw(st.sampled_from(("drop", "add", "swap", "kind")))
    if how == "kind":
        op = kind.split(":")[0]
        return kind, copy.deepcopy(replies[draw(st.sampled_from(sorted(k for k in replies if k.split(":")[0] != op)))])
    places = list(_places(reply))
    if how == "swap":
        path = draw(st.sampled_from(places))
        old = _at(reply, path)
        new = draw(st.sampled_from([v for v in OTHER_VALUES if type(v) is not type(old)]))
        if not path:
            return kind, new
        _at(reply, path[:-1])[path[-1]] = new
        return kind, reply
    objects = [p for p in places if isinstance(_at(reply, p), dict) and (how == "add" or _at(reply, p))]
    where = _at(reply, draw(st.sampled_from(objects)))
    if how == "drop":
        del where[draw(st.sampled_from(sorted(where)))]
    else:
        where[draw(st.sampled_from(("forged", "ok", "extra_field")))] = draw(st.sampled_from(OTHER_VALUES))
    return kind, reply


def _refused(kind: str, reply: Any) -> bool:
    try:
        check_schema(kind.split(":")[0], reply)
    except Malformed:
        return True
    return False


def test_every_honest_reply_fits_its_schema(honest):
    exercise, replies = honest
    assert {"load", "call:placements", "call:full", "trace"} <= set(replies)
    if exercise.slug == "shard_map_psum":  # what the fuzzing below forges holds every part of a call's reply
        full = replies["call:full"]
        assert full["jit_calls"] and full["compilations"] and any(p["collectives"] for p in full["programs"])
    for kind, reply in replies.items():
        ops = [kind.split(":")[0]] if kind != "refused" else list(REPLIES)
        for op in ops:
            check_schema(op, reply)


@pytest.mark.parametrize("op, reply, says", [
    ("load", {"ok": False, "stage": "syntax", "error": 3, "text": 9}, "reply['error'] is a number, not a string"),
    ("load", {"ok": True, "signature": "f(x)", "accepts": True, "placements": []}, "field 'placements' the protocol"),
    ("call", {"ok": True, "value": {"leaves": []}}, "no field 'placements'"),
    ("call", {"ok": True, "placements": [], "value": {"leaves": [{"path": "result", "type": "t", "kind": 1}]}},
     "reply['value']['leaves'][0]['kind'] is not one of"),
    ("call", {"ok": True, "placements": [], "jit_calls": [{"name": "f", "status": "cached", "compiles": True}]},
     "reply['jit_calls'][0]"),
    ("trace", {"ok": "yes"}, "reply"),
    ("trace", [], "reply is a list"),
])
def test_a_reply_of_another_shape_is_malformed_and_says_where(op, reply, says):
    with pytest.raises(Malformed) as raised:
        check_schema(op, reply)
    assert says in str(raised.value), str(raised.value)


@pytest.mark.slow
def test_forged_replies_of_every_kind_are_the_submissions_failure_never_the_graders(honest, tmp_path_factory):
    exercise, replies = honest
    # One real grading per forged reply, its child stood in for; the grading runs its own
    # Hypothesis (the value property) inside this one: nested on purpose.
    @settings(max_examples=200, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.nested_given])
    @given(forged=forgeries(replies))
    def graded(forged: tuple[str, Any]) -> None:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(engine, "Session", replaying_session(replies, forged, tmp_path_factory.mktemp("children")))
            report = engine.grade(exercise, exercise.reference, compile_cache=False)
        errors = [(c.id, c.message) for c in report.checks if c.status == "error"]
        assert not errors, (forged, errors)
        if _refused(*forged):
            limits = next(c for c in report.checks if c.id == "limits.resources")
            assert limits.status == "failed" and "interfered with grading" in limits.message, (forged, limits.message)

    graded()


@pytest.mark.slow
def test_a_submission_answering_every_request_with_wrong_types_fails_with_exit_1():
    """The case of issue #55: a child whose every reply is well-formed JSON of the wrong types
    ("the grader failed ... not your fault", exit 3, before)."""
    shown = subprocess.run([sys.executable, "-m", "grader", "check", str(HOSTILE / "answers_with_wrong_types.py"),
                            "-e", "named_sharding_replicated", "--no-daemon", "--format", "json"],
                           capture_output=True, text=True, cwd=REPO, timeout=300)
    assert shown.returncode == 1, shown.stdout[-2000:] + shown.stderr[-2000:]
    report = json.loads(shown.stdout)
    load = next(c for c in report["checks"] if c["id"] == "load.function")
    assert load["status"] == "failed" and "your code interfered with grading" in load["message"], load
    assert "reply['error'] is a number, not a string" in load["message"], load["message"]
    assert "not your fault" not in shown.stdout
