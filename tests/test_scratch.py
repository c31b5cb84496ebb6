"""A child's folder is removed where the kernel gives no mount ids (gVisor: /proc/self/fdinfo has
no ``mnt_id``), as everywhere else, with one line saying so for the whole process; a tree with a
mount inside is still never entered. Run against a /proc that says what gVisor's says: in a
mount namespace of its own, a tmpfs over /proc whose fdinfo files have no ``mnt_id`` line."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not all(shutil.which(t) for t in ("unshare", "mount")),
                                reason="replacing /proc in a mount namespace of its own needs root, unshare and mount")

# Two trees a submission could leave, removed one after the other in one process: nested
# folders, one made unwritable, a file made unreadable, and a link out of the tree whose
# target must survive.
REMOVE = r'''
import json, logging, os, sys
from grader.sandbox.scratch import remove_tree
records = []
logging.getLogger("jaxgrade.sandbox").addHandler(type("H", (logging.Handler,), {"emit": lambda s, r: records.append(r.getMessage())})())
base, outside = sys.argv[1], sys.argv[2]
results = []
for n in (1, 2):
    tree = os.path.join(base, f"jaxgrade-{n}")
    os.makedirs(os.path.join(tree, "scratch", "a", "b", "c"))
    with open(os.path.join(tree, "scratch", "a", "b", "c", "data"), "w") as f:
        f.write("x" * 1000)
    os.chmod(os.path.join(tree, "scratch", "a", "b", "c", "data"), 0)
    os.chmod(os.path.join(tree, "scratch", "a", "b"), 0o500)
    os.symlink(outside, os.path.join(tree, "scratch", "link"))
    results.append({"leaks": remove_tree(tree), "left": os.path.exists(tree)})
print(json.dumps({"results": results, "log": records}))
'''
FDINFO = "pos:\t0\nflags:\t02100000\n"  # what gVisor's fdinfo holds: no mnt_id line


def _without_mount_ids(tmp_path, mountinfo: str) -> dict:
    base = tmp_path / "trees"
    base.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("the grader's")
    script = (f"mount -t tmpfs none /proc && mkdir -p /proc/self/fdinfo && "
              f"for i in $(seq 0 1023); do printf '{FDINFO}' > /proc/self/fdinfo/$i; done && "
              f"printf '%s' \"$MOUNTINFO\" > /proc/self/mountinfo && "
              f"exec {sys.executable} -c \"$REMOVE\" {base} {outside}")
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "REMOVE": REMOVE, "MOUNTINFO": mountinfo})
    assert done.returncode == 0, done.stderr[-3000:]
    assert outside.read_text() == "the grader's"  # the link was removed, never followed
    return json.loads(done.stdout)


def test_without_mount_ids_every_folder_is_removed_and_it_is_said_once(tmp_path):
    found = _without_mount_ids(tmp_path, "22 1 0:21 / / rw - ext4 /dev/root rw\n")
    assert found["results"] == [{"leaks": [], "left": False}] * 2, found
    assert len(found["log"]) == 1 and "no mount ids" in found["log"][0], found["log"]


def test_without_mount_ids_a_tree_with_a_mount_inside_is_not_entered(tmp_path):
    """A bind mount inside the tree (here said by mountinfo alone) is found there, once for
    the tree: the tree is not entered, and what is left is said."""
    inside = tmp_path / "trees" / "jaxgrade-1" / "scratch" / "a"
    found = _without_mount_ids(tmp_path, f"22 1 0:21 / / rw - ext4 /dev/root rw\n"
                                         f"40 22 0:21 /x {os.path.realpath(tmp_path)}/trees/jaxgrade-1/scratch/a rw "
                                         f"- ext4 /dev/root rw\n")
    first, second = found["results"]
    assert first["left"] and "mounted at" in first["leaks"][0] and str(inside) in first["leaks"][0]
    assert second == {"leaks": [], "left": False}
