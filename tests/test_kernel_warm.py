"""``grader.check()`` through the warm service (grader.notebook.warm_cells): real IPython kernels (driven
by nbclient as Jupyter drives them) and real services, in a runtime folder of this module's own
(tests/test_warm.py's ``Folder``), killed in teardown.

The report the service sends must be the kernel's own, field for field (its timings aside);
whatever goes wrong with the service, the kernel grades its cells itself; and a request is read
as hostile (it comes from where the student's code runs): every field out of bounds is refused,
and the service goes on serving. What went through the service is read from its log."""
from __future__ import annotations

import json
import os
import signal
import socket
import struct
import threading
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import REPO, SEED_EXERCISE
from grader.errors import WarmServiceError
from grader.notebook import warm_cells as cells
from grader.warm import client, frames, place
from test_warm import READY_S, Folder, _alive

SLUG = SEED_EXERCISE.name
REFERENCE = (SEED_EXERCISE / "reference.py").read_text()
# Sums x unplaced. Every kernel here imports JAX at the top of a cell, as a student's does: that
# import sets TF_CPP_MIN_LOG_LEVEL in the kernel's environment, which names another service.
DRAFT = "import jax.numpy as jnp\n\ndef replicated_sharding_value(x):\n    return jnp.sum(x)\n"
LOOPING = (SEED_EXERCISE / "wrong" / "limits_infinite_loop.py").read_text()
CHECK = f"import grader\ngrader.check({SLUG!r})"
# Run after the check cell: its report (IPython's _) as data, what the kernel keeps, its scratch folder's mode.
DUMP = ("import json, os, grader\nkept = grader.notebook.check._KERNEL\n"
        "json.dump({'report': _.as_data(), 'kept': sorted(kept), "
        "'mode': oct(os.stat(kept['folder']).st_mode & 0o777) if 'folder' in kept else None}, open('dump.json', 'w'))")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A runtime folder and a kernels' working folder (one for the module: the folder is on a
    kernel's sys.path, which names its service), with a service started by a first kernel,
    which graded its cells itself; and what that first kernel dumped."""
    folder = Folder()
    work = tmp_path_factory.mktemp("kernels")
    try:
        first = kernel(folder, work, REFERENCE, CHECK, DUMP)
        folder.wait_for(" ready")
        yield folder, work, first
    finally:
        folder.stop()


def kernel(folder: Folder, work: Path, *sources: str, **env: str) -> dict:
    """``sources`` run in a fresh kernel in ``work`` whose environment points at ``folder``'s
    services (``env`` added), the last of them DUMP; what it dumped."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    (work / "dump.json").unlink(missing_ok=True)
    with pytest.MonkeyPatch.context() as patch:  # the kernel inherits this process's environment
        for name in (place.OFF, "CI"):
            patch.delenv(name, raising=False)
        for name, value in {"JAXGRADE_RUNTIME_DIR": str(folder.path), **env}.items():
            patch.setenv(name, value)
        NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(work)}}).execute()
    errors = [o.get("evalue") for c in notebook.cells for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    return json.loads((work / "dump.json").read_text())


def untimed(report: dict) -> dict:
    return {**report, "duration_s": 0, "checks": [{**c, "duration_s": 0} for c in report["checks"]]}


@pytest.mark.slow
def test_where_no_service_answers_the_kernel_grades_and_starts_one(served):
    folder, _, first = served
    assert first["report"]["score"] == first["report"]["max_score"] == 10
    assert first["kept"] == ["folder", "spare"] and first["mode"] == "0o700"
    assert folder.served() == 0 and "warmed on named_sharding_replicated" in folder.log()


@pytest.mark.slow
@pytest.mark.parametrize("definition", [REFERENCE, DRAFT], ids=["passing", "failing"])
def test_the_report_through_the_service_is_the_kernels_own(served, definition):
    folder, work, _ = served
    before = folder.served()
    alone = kernel(folder, work, definition, CHECK, DUMP, JAXGRADE_NO_DAEMON="1")
    assert folder.served() == before and alone["kept"] == ["folder", "spare"]  # graded in the kernel, as before
    through = kernel(folder, work, definition, CHECK, DUMP)
    assert folder.served() == before + 1, folder.log()
    assert through["kept"] == []  # no spare child, no scratch folder: the service's zygote serves the next check
    assert untimed(through["report"]) == untimed(alone["report"])
    assert (alone["report"]["status"] == "passed") == (definition == REFERENCE)


@pytest.mark.slow
def test_a_spare_left_by_a_check_graded_in_the_kernel_is_closed_once_the_service_answers(served):
    folder, work, _ = served
    before = folder.served()
    dumped = kernel(folder, work, REFERENCE, "import os\nos.environ['JAXGRADE_NO_DAEMON'] = '1'", CHECK,
                    "del os.environ['JAXGRADE_NO_DAEMON']", CHECK, DUMP)
    assert folder.served() == before + 1 and dumped["kept"] == ["folder"]


@pytest.mark.slow
def test_a_killed_service_falls_back_to_the_kernel_and_another_starts(served):
    folder, work, first = served
    for pid in folder.pids():
        os.kill(pid, signal.SIGKILL)
    (address,) = folder.path.glob("warm-*.sock")  # left behind: a stale socket, its connection refused
    served_before, ready_before = folder.served(), folder.log().count(" ready")
    again = kernel(folder, work, REFERENCE, CHECK, DUMP)
    assert folder.served() == served_before and again["kept"] == ["folder", "spare"]
    assert untimed(again["report"]) == untimed(first["report"])
    folder.wait_for(" ready", count=ready_before + 1)
    assert address.exists()


@pytest.mark.slow
def test_a_service_killed_mid_check_falls_back_to_the_kernel(served):
    """The service accepts the check, its child loops in the load call (5 s), and it is killed
    then: the kernel grades the cells itself, and shows that report once."""
    folder, work, _ = served
    folder.wait_for(" ready")  # (the previous test's service)
    (pid,) = [p for p in folder.pids() if _alive(p)]
    marker = work / "checking"
    marker.unlink(missing_ok=True)

    def kill_once_checking() -> None:
        deadline = time.monotonic() + READY_S
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(2.0)  # accepted at once; the child loops for call_s
        os.kill(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_once_checking)
    killer.start()
    before = folder.served()
    try:
        dumped = kernel(folder, work, LOOPING, f"open({str(marker)!r}, 'w').close()", CHECK, DUMP)
    finally:
        killer.join()
    assert not _alive(pid) and folder.served() == before
    assert dumped["kept"] == ["folder", "spare"]  # graded in the kernel
    limits = [c for c in dumped["report"]["checks"] if c["category"] == "limits"]
    assert dumped["report"]["status"] == "failed" and limits and limits[0]["status"] == "failed", limits


# --- what a request may hold ----------------------------------------------------------------------

def good(**changed: object) -> dict:
    fields = {**cells.request([REFERENCE, CHECK], SLUG, 0), "protocol": frames.PROTOCOL, "key": "k", "env": {}}
    fields.update(changed)
    return fields


@pytest.mark.parametrize("changed", [
    {"kind": "check"}, {"cells": "def f(): pass"}, {"cells": [1]}, {"cells": [""] * (cells.MAX_CELLS + 1)},
    {"cells": ["x" * (cells.MAX_CHARACTERS + 1)]}, {"exercise": "../../tmp/evil"}, {"exercise": None},
    {"exercise": SLUG.upper()}, {"seed": True}, {"seed": 1.0}, {"seed": 1 << 64}, {"cwd": "relative"},
    {"cwd": "/no/such/folder"}, {"cwd": "/tmp\0/x"}, {"cwd": "/" + "a" * 5000}, {"umask": 0o1000},
    {"umask": "022"}, {"extra": 1},
], ids=lambda changed: next(iter(changed)))
def test_a_request_out_of_bounds_is_refused(changed):
    with pytest.raises(ValueError):
        cells.read(good(**changed), frozenset({SLUG}))


def test_a_request_within_bounds_is_read():
    check = cells.read(good(seed=-3), frozenset({SLUG}))
    assert check == cells.CellsCheck((REFERENCE, CHECK), SLUG, -3, Path(os.getcwd()), check.umask)
    fields = good()
    del fields["umask"]
    with pytest.raises(ValueError):
        cells.read(fields, frozenset({SLUG}))


def ask(address: Path, body: bytes, tag: bytes = frames.REQUEST) -> list[bytes]:
    """The tags of the frames the service sends for one request (REPORT's body dropped)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(120)
        connection.connect(str(address))
        frames.send(connection, tag, body)
        tags = []
        try:
            while True:
                got, _ = frames.receive(connection)
                tags.append(got)
        except (OSError, WarmServiceError):
            return tags


@pytest.mark.slow
def test_the_service_refuses_what_a_hostile_kernel_could_send_and_serves_on(tmp_path):
    """A service of this process's own environment and path, sent requests a notebook's code
    could forge: each refused, none reaching outside (an exercise named by a path is never
    loaded), and a true request is still served."""
    folder = Folder()
    evil = tmp_path / "evil"  # an "exercise" whose checks would leave a mark when imported
    evil.mkdir()
    (evil / "exercise.toml").write_text((SEED_EXERCISE / "exercise.toml").read_text().replace(SLUG, "evil"))
    (evil / "checks.py").write_text(f"open({str(tmp_path / 'imported')!r}, 'w').close()\n")
    try:
        with pytest.MonkeyPatch.context() as patch:
            for name in (place.OFF, "CI"):
                patch.delenv(name, raising=False)
            patch.setenv("JAXGRADE_RUNTIME_DIR", str(folder.path))
            path = place.search_path()
            name = place.key(os.environ, path, place.code_stamp(path))
            environment = place.relevant_environment(os.environ)
            client.start_service(path, name, ["check", str(REPO / "exercises" / SLUG / "reference.py")], after=None)
            folder.wait_for(" ready")
            address = place.socket_path(folder.path, name)
            assert address is not None

            def request(**changed: object) -> bytes:
                return json.dumps(good(**{"key": name, "env": environment, "cwd": str(tmp_path), **changed})).encode()

            refused = [frames.REFUSED]
            relative = os.path.relpath(evil, REPO / "exercises")
            for changed in ({"exercise": relative}, {"exercise": str(evil)}, {"cells": [7]}, {"seed": "0"},
                            {"cwd": "nowhere"}, {"umask": -1}, {"kind": "other"}, {"key": "another"},
                            {"env": {**environment, "JAXGRADE_DEBUG": "1"}}, {"protocol": 1}):
                assert ask(address, request(**changed)) == refused, changed
            assert ask(address, b"[" * 100_000 + b"]" * 100_000) == refused  # nested past the parser's depth
            assert ask(address, b"{}", tag=frames.STDOUT) == refused
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:  # a frame over the bound
                connection.connect(str(address))
                connection.sendall(struct.pack(">cI", frames.REQUEST, frames.MAX_REQUEST + 1))
                connection.settimeout(30)
                assert connection.recv(1) == b""  # closed unread
            # the cells do not define the exercise's function: accepted, then refused (the kernel says why)
            assert ask(address, request(cells=["x = 1"])) == [frames.ACCEPTED, frames.REFUSED]
            assert not (tmp_path / "imported").exists()
            assert ask(address, request()) == [frames.ACCEPTED, frames.REPORT]
            assert folder.served() == 1 and all(_alive(p) for p in folder.pids())
            log = folder.log()  # each refused for its own reason
            assert (log.count("refused a notebook check: "), log.count("refused a request that does not match"),
                    log.count("refused a request of no kind"), log.count("not graded: CheckCellError")) == (6, 5, 1, 1)
    finally:
        folder.stop()
