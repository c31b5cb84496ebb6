"""grader/sandbox/witness.py: each grading's witness is started and confined as its child is
(a uid of its own where the grader is root, the child's namespaces, its limits), is ended
with the grading, and its silence (killed, out of time) is never a pass.

Real sessions, real processes, observed from outside through /proc."""
from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from grader import find_exercise, grade
from grader.observe.session import Session, Unanswered
from grader.sandbox.limits import Limits
from grader.sandbox.pool import Pool
from grader.sandbox.uids import SANDBOX_UIDS, WITNESS_UIDS
from grader.sandbox.witness import CAP_S, FLOOR_S, WITNESS_GID, account_budget

EXERCISES = Path(__file__).resolve().parent.parent / "exercises"
ROOT = os.geteuid() == 0
SOLUTION = '''
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P


def placed_sum(x):
    mesh = jax.make_mesh((1,), ("data",), devices=jax.devices()[:1])
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, P())))
'''
PROBE = {"x": np.arange(8, dtype=np.float32)}


def _status(pid: int, field: str) -> list[str]:
    with open(f"/proc/{pid}/status") as status:
        return next(line.split()[1:] for line in status if line.startswith(field + ":"))


def _session(tmp_path: Path, launcher=None, compile_cache: str | None = None) -> Session:
    path = tmp_path / "solution.py"
    path.write_text(SOLUTION)
    session = Session(path, "placed_sum", ("x",), 1, Limits(call_s=60, total_s=180), compile_cache, launcher)
    assert session.load().ok, session.load().detail
    return session


def _witness_pid(session: Session) -> int:
    witness = session._witness()
    assert witness.pid is not None
    return witness.pid


@pytest.mark.parametrize("forked", [False, True])
def test_the_witness_runs_confined_under_a_uid_that_is_neither_a_childs_nor_the_graders(tmp_path: Path,
                                                                                       forked: bool) -> None:
    with Pool() as pool:
        session = _session(tmp_path, pool.launch if forked else None)
        try:
            returned = session.call(PROBE, record="full")
            assert returned.ok and session.witnessed.status == "reproduced", session.witnessed
            pid = _witness_pid(session)
            child = session._child.process.pid
            uid, gid = int(_status(pid, "Uid")[0]), int(_status(pid, "Gid")[0])
            if ROOT:
                assert uid in WITNESS_UIDS and uid not in SANDBOX_UIDS and gid == WITNESS_GID
                assert int(_status(child, "Uid")[0]) in SANDBOX_UIDS
            else:
                assert uid == os.geteuid()
            assert _status(pid, "NoNewPrivs") == ["1"]
            protections = session._witness()._process.protections
            if protections.get("network", {}).get("active"):  # the child's namespaces, where it gets them
                assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
                assert session._child.protections["network"]["active"]
            for name in ("time", "environment", "cleanup", "output"):
                assert protections[name]["active"], name
        finally:
            session.close()


def test_each_grading_has_a_witness_of_its_own_ended_with_it(tmp_path: Path) -> None:
    first = _session(tmp_path)
    try:
        assert first.call(PROBE, record="full").ok
        pid = _witness_pid(first)
    finally:
        first.close()
    second = _session(tmp_path)
    try:
        assert second.call(PROBE, record="full").ok
        assert _witness_pid(second) != pid
        for _ in range(100):  # given back in the background
            if not Path(f"/proc/{pid}").exists() or _status(pid, "State")[0] == "Z":
                break
            time.sleep(0.05)
        assert not Path(f"/proc/{pid}").exists() or _status(pid, "State")[0] == "Z"
    finally:
        second.close()


def test_a_witness_killed_before_the_replay_gives_no_answer_never_a_pass(tmp_path: Path) -> None:
    session = _session(tmp_path)
    try:
        returned = session.call(PROBE, record="full")
        assert returned.reproduced
        placed = returned.account["steps"][0]["sharding"]
        os.killpg(_witness_pid(session), signal.SIGKILL)  # the witness and all it runs (its namespace's init)
        replayed = session.replay_placed(returned, PROBE, 0, placed, PROBE["x"] + 1.0)
        assert isinstance(replayed, Unanswered) and "ended without an answer" in replayed.why, replayed
        again = session.replay_placed(returned, PROBE, 0, placed, PROBE["x"] + 1.0)  # a fresh witness answers
        assert not isinstance(again, Unanswered) and float(again[0].array) == float(np.sum(PROBE["x"] + 1.0))
    finally:
        session.close()


def test_the_budget_grows_with_the_calls_own_time_and_is_capped() -> None:
    assert account_budget(0.0) == FLOOR_S
    assert FLOOR_S < account_budget(1.0) < CAP_S
    assert account_budget(3600.0) == CAP_S


@pytest.mark.slow
def test_a_term_that_vanishes_in_the_call_and_spins_in_the_replay_fails_and_costs_seconds() -> None:
    """The product from the original x plus a term that vanishes while the placed rows equal x,
    and an eager while_loop that spins for ever when they differ: only the grader's replay with
    the placed copy changed reaches it. 13/13 when a replay past its deadline said nothing."""
    exercise = find_exercise("sharded_matmul")
    report = grade(exercise, EXERCISES / "sharded_matmul" / "wrong" / "structure_vanishing_term_spins_in_replay.py")
    found = {c.id: c for c in report.checks}
    judged = found["structure.product_of_placed_x"]
    assert judged.status == "failed", judged.message
    assert "did not finish when run again" in judged.message and "tamper" not in judged.message.lower()
    budget = float(re.search(r"within ([0-9.]+) s", judged.message).group(1))
    assert budget <= CAP_S  # what the spinning replay cost: one capped budget
    # the student's own time was not charged for the witness's
    assert found["limits.resources"].status == "passed", found["limits.resources"].message


@pytest.mark.skipif(not ROOT, reason="the witness cache is read-only to witnesses of a uid of their own")
def test_the_witness_cache_is_read_only_to_a_confined_witness_and_closed_to_children(tmp_path: Path,
                                                                                     monkeypatch) -> None:
    monkeypatch.setenv("JAXGRADE_CACHE", str(tmp_path / "cache"))
    from grader.cache import compile_cache_directory, witness_cache_folder
    session = _session(tmp_path, compile_cache=compile_cache_directory())
    try:
        assert session.call(PROBE, record="full").reproduced
        folder = witness_cache_folder(WITNESS_GID)
        info = os.stat(folder)
        assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (0, WITNESS_GID, 0o750)
        protections = session._witness()._process.protections
        assert protections["read_only"]["active"] and folder in protections["read_only"]["detail"], protections
        assert int(_status(session._child.process.pid, "Gid")[0]) != WITNESS_GID  # a child cannot enter it
    finally:
        session.close()


def test_an_account_that_does_not_finish_costs_one_budget_and_no_later_account_runs() -> None:
    """A program that never ends, handed over twice: the first runs out its budget (the call's
    own time counted as none: the floor), the second is not run at all."""
    import base64

    import jax

    from grader.arguments import encode
    from grader.sandbox.witness import Witness
    x = np.ones(2, np.float32)
    forever = jax.export.export(jax.jit(lambda v: jax.lax.while_loop(lambda c: c[0] > 0, lambda c: c + 1.0, v)))(x)
    account = {"steps": [{"kind": "program", "reads": [["arg", 0]], "program": 0}],
               "programs": [{"b64": base64.b64encode(forever.serialize()).decode("ascii")}], "constants": [],
               "outputs": [["step", 0, 0]]}
    witness = Witness(1, Limits(call_s=60, total_s=180), None, (), None)
    try:
        first = witness.check(account, [["x", encode(x)]], account_budget(0.0))
        assert first["ok"] is False and "did not finish when run again" in first["unverifiable"], first
        spent = witness.spent
        second = witness.check(account, [["x", encode(x)]], account_budget(0.0))
        assert "an earlier call's; the grader runs no more" in second["unverifiable"] and witness.spent == spent
    finally:
        witness.close()
