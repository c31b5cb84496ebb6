"""Every world-writable folder of the machine (/tmp, /var/tmp, /dev/shm, /run/lock and any other)
is the child's own or emptied of what it left when it ends, and what it writes there is bounded
(#41.1). Played by tests/hostile/world_writable.py, which lists, leaves and fills each folder,
against a 1777 folder this test makes where no list of well-known names would look."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO
from grader import grade
from grader.sandbox import world_writable
from grader.sandbox.limits import Limits
from grader.sandbox.reaper import sweep_uid
from grader.sandbox.uids import SANDBOX_UIDS

HOSTILE = Path(__file__).parent / "hostile"
ROOT = os.geteuid() == 0
LIMITS = Limits(call_s=3, total_s=30, startup_s=30, memory_mib=2048, scratch_mib=16)
NEEDS_ROOT = pytest.mark.skipif(not ROOT, reason="making a 1777 folder outside /tmp and sandbox uids needs root")


@pytest.fixture
def extra_folder():
    """A 1777 folder three levels below / (as /var/lib/php/sessions is), with a file of root's in
    it, and one in /run/lock: a child must see neither, and both must survive it."""
    folder = Path(f"/var/lib/jaxgrade-test-ww-{os.getpid()}")
    folder.mkdir(mode=0o755)
    folder.chmod(0o1777)
    planted = [folder / "planted-by-root", Path(f"/run/lock/jaxgrade-planted-{os.getpid()}")]
    for path in planted:
        path.write_text("root's")
    world_writable._found = None  # scan again: the folder is new
    yield folder, planted
    for path in planted:
        path.unlink(missing_ok=True)
    shutil.rmtree(folder, ignore_errors=True)
    world_writable._found = None


def _leftovers(folders: list[str]) -> list[str]:
    return [str(p) for f in folders if os.path.isdir(f) for p in Path(f).iterdir() if p.name.startswith("left-by-")]


def _submission(tmp_path: Path, folders: list[str], stop_mib: int) -> Path:
    source = (HOSTILE / "world_writable.py").read_text()
    path = tmp_path / "class" / "world_writable.py"
    path.parent.mkdir()
    path.parent.chmod(0o755)
    tmp_path.chmod(0o755)
    path.write_text(source.replace("{FOLDERS}", repr(folders)).replace("{STOP_MIB}", str(stop_mib)))
    path.chmod(0o644)
    return path


def test_the_scan_finds_the_usual_folders_and_a_new_one_cheaply(tmp_path):
    found = world_writable.scan()
    for usual in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
        if os.path.isdir(usual) and not os.path.islink(usual) and os.stat(usual).st_mode & 0o003 == 0o003:
            assert usual in found, found
    assert not any(a != b and b.startswith(a + "/") for a in found for b in found)  # outermost only
    started = time.perf_counter()
    for _ in range(5):
        world_writable.scan()
    assert (time.perf_counter() - started) / 5 < 0.1  # once a minute per grader, never per child


@NEEDS_ROOT
def test_the_sweep_removes_what_a_uid_left_and_nothing_else(extra_folder):
    """As the reaper does after a child without a mount namespace: a uid's files, its folders
    (made unwritable, deep), in every world-writable folder; root's files stay."""
    folder, planted = extra_folder
    uid = SANDBOX_UIDS.stop - 1
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            for place in ("/run/lock", str(folder), "/dev/shm"):
                Path(place, "left-by-uid.txt").write_text("x")
                Path(place, "left-by-uid-dir", "a", "b").mkdir(parents=True)
                Path(place, "left-by-uid-dir", "a").chmod(0o500)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert sum(1 for _ in Path("/run/lock").glob("left-by-uid*")) == 2
    assert sweep_uid(uid)
    assert not [p for f in ("/run/lock", str(folder), "/dev/shm") for p in Path(f).glob("left-by-uid*")]
    assert all(p.read_text() == "root's" for p in planted)


@NEEDS_ROOT
def test_the_sweep_removes_where_it_found_what_a_uid_left_even_if_a_link_replaces_a_folder_on_the_way(tmp_path):
    """Another user may rename what its world-writable folder holds, and put a link in its place,
    while the sweep of a uid runs: the uid's folder ``x`` found in ``shared/sub`` must be removed
    there, never in what ``shared/sub`` names once it has become a link to root's folder (by path,
    root would empty root's own ``victim/x``: a link to / would have it empty /tmp)."""
    uid, other = SANDBOX_UIDS.stop - 1, SANDBOX_UIDS.stop - 2
    shared = tmp_path / "shared"
    (shared / "sub" / "x").mkdir(parents=True)
    (shared / "sub" / "x" / "left-by-uid").write_text("x")
    for path, owner in ((shared, other), (shared / "sub", other), (shared / "sub" / "x", uid),
                        (shared / "sub" / "x" / "left-by-uid", uid)):
        os.chown(path, owner, owner)
    for folder in (shared, shared / "sub"):
        folder.chmod(0o777)  # another user's folders that every user may write: the sweep enters them
    victim = tmp_path / "victim"
    (victim / "x").mkdir(parents=True)
    (victim / "x" / "root's").write_text("keep")
    found = world_writable._owned_entries(uid, (str(tmp_path),))
    entry = next(found)
    assert entry.path == str(shared / "sub" / "x")
    (shared / "sub").rename(shared / "moved")  # what the other user does meanwhile
    (shared / "sub").symlink_to(victim)
    assert world_writable._remove(entry) == []
    assert (victim / "x" / "root's").read_text() == "keep"
    assert not (shared / "moved" / "x").exists()  # removed where it was found
    assert list(found) == []


@pytest.mark.slow
@NEEDS_ROOT
def test_a_child_has_its_own_empty_world_writable_folders_and_leaves_nothing(tmp_path, seed_exercise, extra_folder):
    folder, planted = extra_folder
    folders = ["/tmp", "/var/tmp", "/dev/shm", "/run/lock", str(folder)]
    report = grade(seed_exercise, _submission(tmp_path, folders, 2), limits=LIMITS)
    output = report.output["head"] + report.output["tail"]
    temporaries = report.environment["protections"]["temporary_files"]
    if not temporaries["active"]:
        pytest.skip(f"no mount namespace here: {temporaries['detail']}")
    assert report.status == "passed", [(c.id, c.message) for c in report.checks]
    for place in folders[1:]:
        assert f"SAW {place} []" in output, output  # empty: its own
    # /tmp holds only what the grader bound back into it: the child's own folder and the compilation cache
    seen_in_tmp = eval(output.split("SAW /tmp ", 1)[1].splitlines()[0])
    assert all(name.startswith("jaxgrade-") for name in seen_in_tmp), seen_in_tmp
    for place in folders:
        assert f"LEFT {place}" in output and place in temporaries["detail"], output  # and writable
    assert not _leftovers(folders)
    assert all(p.read_text() == "root's" for p in planted)


# A grader in a container without CAP_SYS_ADMIN (Gradescope's): root, so a sandbox uid, but no
# namespace can be made, so the child writes the machine's own world-writable folders.
NO_NAMESPACES = """
import json, sys
from pathlib import Path
from grader import grade
from grader.authoring.exercise import find_exercise
from grader.sandbox.limits import Limits
report = grade(find_exercise("named_sharding_replicated"), Path(sys.argv[1]), compile_cache=False,
               limits=Limits(call_s=3, total_s=30, startup_s=30, memory_mib=2048, scratch_mib=16))
print(json.dumps({"status": report.status, "output": report.output["head"] + report.output["tail"],
                  "checks": {c.id: [c.status, c.message] for c in report.checks},
                  "protections": report.environment["protections"]}))
"""
DOCKER_CAPABILITIES = ("chown", "dac_override", "fsetid", "fowner", "mknod", "net_raw", "setgid", "setuid", "setfcap",
                       "setpcap", "net_bind_service", "sys_chroot", "kill", "audit_write")


def _blocked_ancestor(path: Path) -> tuple[Path, str] | None:
    parts = path.resolve().parts
    for depth in range(2, len(parts)):
        if not Path(*parts[:depth]).stat().st_mode & stat.S_IXOTH:
            return Path(*parts[:depth]), parts[depth]
    return None


def _without_namespaces(submission: Path) -> dict:
    """``NO_NAMESPACES`` on ``submission``, as root with Docker's capabilities only (no
    CAP_SYS_ADMIN, so no namespace for the child) and $TMPDIR unset: the child's working folder
    lies in the machine's /tmp."""
    expose = ""
    blocked = _blocked_ancestor(Path(sys.base_prefix))
    if blocked:  # as an image has it: Python where every user may read it
        where, step = blocked
        expose = (f'stage=$(mktemp -d); mount --bind "{where}/{step}" "$stage"; '
                  f'mount -t tmpfs -o mode=0755,size=1m tmpfs "{where}"; mkdir "{where}/{step}"; '
                  f'mount --move "$stage" "{where}/{step}"; rmdir "$stage"; ')  # no empty folder left in /tmp
    capabilities = ",".join(f"+{c}" for c in DOCKER_CAPABILITIES)
    script = (f"set -e; {expose}exec setpriv --bounding-set=-all,{capabilities} --inh-caps=-all -- "
              f"{sys.executable} -c \"$GRADER\" {submission}")
    environment = {key: value for key, value in os.environ.items() if key != "TMPDIR"}
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "bash", "-c", script],
                          capture_output=True, text=True, timeout=300,
                          env={**environment, "GRADER": NO_NAMESPACES, "JAXGRADE_CACHE": "off",
                               "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


CONTAINER_TOOLS = pytest.mark.skipif(not all(shutil.which(t) for t in ("unshare", "setpriv", "mount")),
                                     reason="needs unshare, setpriv, mount")


@pytest.mark.slow
@NEEDS_ROOT
@CONTAINER_TOOLS
def test_without_a_mount_namespace_what_the_uid_wrote_is_bounded_and_removed(tmp_path, extra_folder):
    folder, planted = extra_folder
    folders = ["/tmp", "/var/tmp", "/dev/shm", "/run/lock", str(folder)]
    submission = _submission(tmp_path, folders, 64)  # past its 16 MiB: the watch must stop it
    result = _without_namespaces(submission)
    protections = result["protections"]
    assert not protections["temporary_files"]["active"] and protections["user"]["active"], protections
    assert "removed when it ends" in protections["temporary_files"]["detail"]
    assert "what its uid owns in" in protections["scratch"]["detail"]
    limits = result["checks"]["limits.resources"]
    assert limits[0] == "failed" and "more than 16 MiB" in limits[1], (limits, result["output"][-2000:])
    assert "LEFT /run/lock" in result["output"] and f"LEFT {folder}" in result["output"]
    assert not _leftovers(folders)
    assert all(p.read_text() == "root's" for p in planted)


WRITES_IN_ITS_FOLDER = """
import os, time
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def replicated_sharding_value(x):
    if not os.path.exists("data.bin"):
        with open("data.bin", "wb") as handle:
            for _ in range(10):
                handle.write(b"x" * (1 << 20))
        print("WROTE", os.getcwd(), flush=True)
        time.sleep(1.5)  # the watch walks at least once a second meanwhile
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return jnp.sum(jax.device_put(x, NamedSharding(mesh, PartitionSpec())), dtype=jnp.float32)
"""


@pytest.mark.slow
@NEEDS_ROOT
@CONTAINER_TOOLS
def test_without_a_mount_namespace_the_working_folder_in_tmp_is_counted_once(tmp_path):
    """The child's working folder is made in $TMPDIR (/tmp here) and given to its uid, so the
    sweep's walk of what the uid owns in /tmp finds it too: 10 MiB written there, under a 16 MiB
    bound, must count 10 MiB, not 20."""
    submission = tmp_path / "class" / "writes.py"
    submission.parent.mkdir()
    for folder in (tmp_path, submission.parent):
        folder.chmod(0o755)
    submission.write_text(WRITES_IN_ITS_FOLDER)
    result = _without_namespaces(submission)
    assert not result["protections"]["temporary_files"]["active"], result["protections"]
    assert "WROTE /tmp/" in result["output"], result["output"][-2000:]
    limits = result["checks"]["limits.resources"]
    assert limits[0] == "passed", (limits, result["output"][-2000:])
    assert result["status"] == "passed", result["checks"]
