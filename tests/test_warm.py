"""The warm path of `jaxgrade check` (grader.warm): real `jaxgrade check` processes, a real
service each test starts in a runtime folder of its own (JAXGRADE_RUNTIME_DIR, so neither another
test's nor a developer's service is ever reached), killed in teardown.

What goes through the service is read from its log (one "served" line per check), never mocked;
the reports, exit codes and stderr must be the same bytes as an in-process check's."""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import REPO, SEED_EXERCISE
from grader.warm import place

REFERENCE = "exercises/named_sharding_replicated/reference.py"
WRONG = "exercises/named_sharding_replicated/wrong/value_mean.py"
READY_S = 120.0  # the service waits for the first check to exit, then imports and grades once
# The installed script, as a student runs it: `python -m grader` puts its working folder on
# sys.path, which is part of the service's name (grader.warm.place), so checks from two folders
# would reach two services.
JAXGRADE = [str(Path(sys.executable).parent / "jaxgrade")]


class Folder:
    """A runtime folder, the environment that points checks at it, and what its services wrote."""

    def __init__(self, **extra: str) -> None:
        # short: a socket's path must fit in 108 bytes (pytest's tmp_path may not)
        self.path = Path(tempfile.mkdtemp(prefix="jgw-", dir="/tmp"))
        self.env = {k: v for k, v in os.environ.items() if k not in (place.OFF, "CI")}
        self.env.update(NO_COLOR="1", JAXGRADE_RUNTIME_DIR=str(self.path), **extra)

    def check(self, *args: str, **extra: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([*JAXGRADE, "check", *args], capture_output=True, cwd=REPO,
                              env={**self.env, **extra}, timeout=180)

    def log(self) -> str:
        return "".join(p.read_text() for p in self.path.glob("warm-*.log"))

    def served(self) -> int:
        return self.log().count(" served ")

    def wait_for(self, text: str, count: int = 1, timeout: float = READY_S) -> None:
        deadline = time.monotonic() + timeout
        while self.log().count(text) < count:
            assert time.monotonic() < deadline, f"no {text!r} in the service's log: {self.log()!r}"
            time.sleep(0.1)

    def pids(self) -> list[int]:
        found = []
        for path in self.path.glob("warm-*.pid"):
            try:
                found.append(int(path.read_text()))
            except (OSError, ValueError):
                pass
        return found

    def stop(self) -> None:
        """Every service this folder saw, ended (SIGTERM, then SIGKILL), and the folder removed."""
        deadline = time.monotonic() + 10
        for pid in self.pids():
            _signal(pid, signal.SIGTERM)
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in self.pids():
            _signal(pid, signal.SIGKILL)
        shutil.rmtree(self.path, ignore_errors=True)


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except OSError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a zombie is gone for our purposes
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _untimed(data: bytes) -> str:
    """A report's text, its timings (JSON's ``duration_s``) set to 0: the rest must match byte for byte."""
    return re.sub(r'"duration_s": [0-9.e+-]+', '"duration_s": 0', data.decode())


def same(a: subprocess.CompletedProcess[bytes], b: subprocess.CompletedProcess[bytes]) -> None:
    assert (a.returncode, _untimed(a.stdout), a.stderr) == (b.returncode, _untimed(b.stdout), b.stderr)


@pytest.fixture(scope="module")
def warm():
    """A folder whose service is running and warm, and the first (in-process) check that started it."""
    folder = Folder()
    try:
        first = folder.check(REFERENCE)
        folder.wait_for(" ready")
        yield folder, first
    finally:
        folder.stop()


def test_a_second_check_goes_through_the_service_with_the_same_bytes(warm):
    folder, first = warm
    assert first.returncode == 0 and first.stdout, first.stderr
    assert folder.served() == 0  # the first check graded in its own process
    started = time.monotonic()
    second = folder.check(REFERENCE)
    took = time.monotonic() - started
    assert folder.served() == 1, folder.log()
    same(first, second)
    assert took < 5.0  # (0.4-0.5 s on a quiet machine; docs/performance.md)


def test_a_wrong_submission_reads_the_same_through_the_service(warm):
    folder, _ = warm
    before = folder.served()
    served = folder.check(WRONG, "--format", "json")
    assert folder.served() == before + 1
    alone = folder.check(WRONG, "--format", "json", "--no-daemon")
    assert folder.served() == before + 1
    assert served.returncode == 1
    same(served, alone)
    served_text, alone_text = folder.check(WRONG), folder.check(WRONG, JAXGRADE_NO_DAEMON="1")
    assert folder.served() == before + 2
    same(served_text, alone_text)


def test_usage_errors_and_relative_paths_are_the_clients(warm):
    folder, _ = warm
    before = folder.served()
    missing = folder.check("no/such/file.py")
    assert folder.served() == before + 1  # answered by the service, as the CLI would answer it
    same(missing, folder.check("no/such/file.py", "--no-daemon"))
    assert missing.returncode == 2
    def written(name: str, *extra: str) -> bytes:  # -o relative to the client's folder, not the service's
        done = subprocess.run([*JAXGRADE, "check", str(REPO / REFERENCE), "-o", name, *extra],
                              capture_output=True, cwd=folder.path, env=folder.env, timeout=180)
        assert done.returncode == 0 and not done.stdout
        return (folder.path / name).read_bytes()

    assert written("served.txt") == written("alone.txt", "--no-daemon")
    assert folder.served() == before + 2


def test_the_course_is_each_checks_own(warm, tmp_path):
    """``--course DIR`` is read per check by the service that answers it: two courses each holding
    an exercise ``replica`` (docs/course.md), checked one after the other through one service,
    each graded against its own; then a check that names no course finds no ``replica``. A
    service started by a check with --course warms up on that course's exercise."""
    folder, _ = warm
    for name in ("A", "B"):
        own = tmp_path / name / "exercises" / "replica"
        shutil.copytree(SEED_EXERCISE, own, ignore=shutil.ignore_patterns("__pycache__", "right", "wrong"))
        toml = own / "exercise.toml"
        toml.write_text(toml.read_text().replace('slug = "named_sharding_replicated"', 'slug = "replica"')
                        .replace('title = "NamedSharding (replicated)"', f'title = "Course {name}"'))
        (tmp_path / name / "jaxgrade.toml").write_text('track = "none"\n')
    before = folder.served()
    for name in ("A", "B"):
        done = folder.check(REFERENCE, "-e", "replica", "--course", str(tmp_path / name))
        assert done.returncode == 0 and f"jaxgrade · Course {name} (replica)" in done.stdout.decode(), done.stderr
    unknown = folder.check(REFERENCE, "-e", "replica")
    assert unknown.returncode == 2 and b"unknown exercise 'replica'" in unknown.stderr
    assert folder.served() == before + 3, folder.log()
    fresh = Folder()
    try:
        assert fresh.check(REFERENCE, "-e", "replica", "--course", str(tmp_path / "A")).returncode == 0
        fresh.wait_for(" ready")
        assert "warmed on replica" in fresh.log(), fresh.log()
    finally:
        fresh.stop()


def test_another_environment_is_another_service(warm):
    folder, _ = warm
    before = folder.served()
    other = folder.check(REFERENCE, JAXGRADE_DEBUG="1")  # another key: no service for it yet
    assert other.returncode == 0 and folder.served() == before
    assert len(list(folder.path.glob("warm-*.lock"))) == 2  # it started its own (the fixture ends it)


def test_a_client_gone_mid_check_interrupts_it_and_the_next_is_served(warm):
    folder, first = warm
    before = folder.log().count("the client went away")
    looping = "exercises/named_sharding_replicated/wrong/limits_infinite_loop.py"
    hanging = subprocess.Popen([*JAXGRADE, "check", looping],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO, env=folder.env)
    time.sleep(2.0)  # accepted, its child in the loop
    hanging.kill()  # its end of the socket closes, as on Ctrl-C
    hanging.wait()
    folder.wait_for("the client went away", count=before + 1, timeout=10)
    served = folder.served()
    started = time.monotonic()
    same(first, folder.check(REFERENCE))
    assert folder.served() == served + 1 and time.monotonic() - started < 10


def test_on_a_terminal_the_colours_are_the_same(warm):
    """stdout a terminal (a pty) and NO_COLOR unset: the service renders in colour, as the CLI does."""
    import pty

    def on_a_terminal(*extra: str) -> bytes:
        leader, follower = pty.openpty()
        env = {k: v for k, v in folder.env.items() if k != "NO_COLOR"}
        done = subprocess.run([*JAXGRADE, "check", REFERENCE, *extra], stdout=follower, stderr=subprocess.PIPE,
                              cwd=REPO, env=env, timeout=180)
        os.close(follower)
        data = b""
        while True:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            data += chunk
        os.close(leader)
        assert done.returncode == 0, done.stderr
        return data

    folder, _ = warm
    logs = set(folder.path.glob("warm-*.log"))
    alone = on_a_terminal()  # another environment than the fixture's (NO_COLOR unset): in-process, starts one
    deadline = time.monotonic() + READY_S
    while not any(" ready" in p.read_text() for p in set(folder.path.glob("warm-*.log")) - logs):
        assert time.monotonic() < deadline, folder.log()
        time.sleep(0.1)
    served = folder.served()
    through = on_a_terminal()
    assert folder.served() == served + 1
    assert b"\x1b[" in through and through == alone


@pytest.mark.parametrize("how", ["mode", "owner", "link"])
def test_a_folder_others_could_reach_is_refused(how):
    folder = Folder()
    try:
        private = folder.path / "private"
        if how == "mode":
            os.chmod(folder.path, 0o755)
        elif how == "owner":
            if os.geteuid() != 0:
                pytest.skip("giving the folder to another user needs root")
            os.chown(folder.path, 65534, 65534)
        else:
            private.mkdir(0o700)
            link = folder.path / "link"
            link.symlink_to(private)
            folder.env["JAXGRADE_RUNTIME_DIR"] = str(link)
        assert place.runtime_folder(folder.env) is None
        checked = folder.check(REFERENCE)
        assert checked.returncode == 0 and checked.stdout
        time.sleep(0.5)
        assert not list(folder.path.glob("warm-*")) and not (private.exists() and list(private.iterdir()))
    finally:
        folder.stop()


def test_the_service_stops_when_idle():
    folder = Folder(JAXGRADE_DAEMON_IDLE_S="1")
    try:
        assert folder.check(REFERENCE).returncode == 0
        folder.wait_for(" ready")
        pids = folder.pids()
        folder.wait_for("stopped: idle", timeout=30)
        deadline = time.monotonic() + 5
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pids and not any(_alive(p) for p in pids)
        assert not list(folder.path.glob("warm-*.sock")) and not folder.pids()
    finally:
        folder.stop()


def test_a_service_whose_code_changed_stops_and_the_next_check_is_not_stale():
    """An upgrade or an edit of the grader (a module's mtime) names another socket, and the old
    service exits at its next look (within grader.warm.service.TICK_S)."""
    folder = Folder()
    module = REPO / "grader" / "warm" / "frames.py"
    times = os.stat(module)
    try:
        assert folder.check(REFERENCE).returncode == 0
        folder.wait_for(" ready")
        (old,) = folder.path.glob("warm-*.sock")
        os.utime(module, ns=(times.st_atime_ns, times.st_mtime_ns + 1_000_000_000))
        folder.wait_for("stopped: the grader's code changed", timeout=30)
        served = folder.served()
        assert folder.check(REFERENCE).returncode == 0 and folder.served() == served  # in-process, a new name
        assert not old.exists()
    finally:
        os.utime(module, ns=(times.st_atime_ns, times.st_mtime_ns))
        folder.stop()


def _junk_server(address: Path, stop: threading.Event) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(address))
    listener.listen(4)
    listener.settimeout(0.2)

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            with connection:
                connection.sendall(b"a\x00\x00\x00\x00" + b"1\x00\x00\x00\x05junk!" + b"z" * 9)
    threading.Thread(target=serve, daemon=True).start()
    return listener


def test_a_killed_service_or_a_broken_one_falls_back_cleanly():
    folder = Folder()
    stop = threading.Event()
    try:
        first = folder.check(REFERENCE)
        folder.wait_for(" ready")
        (pid,) = folder.pids()
        os.kill(pid, signal.SIGKILL)
        while _alive(pid):
            time.sleep(0.05)
        (address,) = folder.path.glob("warm-*.sock")  # left behind: a stale socket
        same(first, folder.check(REFERENCE))  # refused connection: graded in-process
        folder.wait_for(" ready", count=2)  # and a new service started for the next check
        for pid in folder.pids():
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.3)
        address.unlink()
        listener = _junk_server(address, stop)  # something answering with a broken frame
        try:
            same(first, folder.check(REFERENCE))
        finally:
            stop.set()
            listener.close()
    finally:
        stop.set()
        folder.stop()


def test_private_folder_rules(tmp_path):
    os.chmod(tmp_path, 0o700)
    assert place.private_folder(tmp_path)
    os.chmod(tmp_path, 0o750)
    assert not place.private_folder(tmp_path)
    assert not place.private_folder(tmp_path / "missing")
    assert place.switched_off(["check", "f.py", "--no-daemon"], {})
    assert place.switched_off(["check", "f.py"], {place.OFF: "1"})
    assert place.switched_off(["check", "f.py"], {"CI": "true"})
    assert not place.switched_off(["check", "f.py"], {place.OFF: "0"})
    assert stat.S_IMODE(os.stat(tmp_path).st_mode) == 0o750
    assert SEED_EXERCISE.is_dir()


def test_the_code_stamp_covers_the_grader_and_not_the_data_a_wheel_carries(tmp_path, monkeypatch):
    """A wheel carries the exercises (~670 .py files of variants) and templates inside grader/:
    not code, so editing one changes no stamp (a kept exercise is reloaded when its files
    change), and they cost the stamp nothing; a module of the grader still changes it."""
    package = tmp_path / "grader"
    for relative in ("cli.py", "warm/place.py", "exercises/one/checks.py", "templates/report.txt.j2"):
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text("x = 1\n")
    monkeypatch.setattr(place, "PACKAGE", package)
    first = place.code_stamp([])
    (package / "exercises" / "one" / "checks.py").write_text("x = 22\n")
    (package / "exercises" / "two.py").write_text("x = 3\n")
    assert place.code_stamp([]) == first
    (package / "warm" / "place.py").write_text("x = 22\n")
    assert place.code_stamp([]) != first
