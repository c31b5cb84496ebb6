"""grader.batch.intake: folders, per-student folders and zips as LMSs export them; every entry that
cannot be graded is reported, none is fatal; zips are unpacked safely (no zip-slip, no bomb)."""
from __future__ import annotations

import hashlib
import io
import os
import re
import socket
import stat
import threading
import unicodedata
import zipfile
from pathlib import Path

import pytest

from grader.batch.intake import find_submissions
from grader.batch.tree import MAX_FILE_BYTES
from grader.errors import IntakeError

SOLUTION = "import jax.numpy as jnp\n\ndef replicated_sharding_value(x):\n    return jnp.sum(x)\n"
HELPER = "def helper():\n    return 1\n"
FUNCTION = "replicated_sharding_value"


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def zip_of(path: Path, files: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return path


def reasons(intake) -> dict[str, str]:
    return {p.source: p.reason for p in intake.problems}


def test_folder_of_files_names_students_by_stem_and_reports_the_rest(tmp_path):
    root = write(tmp_path / "class", {"alice.py": SOLUTION, "bob.py": SOLUTION + "# bob\n", "empty.py": "  \n",
                                      "notes.txt": "hello", "carol.ipynb": "{}", ".DS_Store": "junk"})
    intake = find_submissions(root, FUNCTION)
    # An empty file is graded, as `jaxgrade check` and Gradescope grade it: its load check says why it fails.
    assert [s.student for s in intake.submissions] == ["alice", "bob", "empty"]
    alice = intake.submissions[0]
    assert alice.source == "alice.py" and alice.sha256 == hashlib.sha256(SOLUTION.encode()).hexdigest()
    # A notebook is graded like a .py file (tests/test_source.py); "{}" is not one Jupyter can open.
    assert reasons(intake) == {"notes.txt": "not_python", "carol.ipynb": "unreadable"}
    assert intake.layout == "files"
    notebook = next(p for p in intake.problems if p.source == "carol.ipynb")
    assert "not a notebook Jupyter can open" in notebook.message
    assert intake.students == ["alice", "bob", "carol", "empty"]  # carol is named, though not graded


def test_per_student_folders_pick_the_file_that_defines_the_function(tmp_path):
    root = write(tmp_path / "class", {
        "alice/solution.py": SOLUTION,
        "bob/helpers.py": HELPER, "bob/main.py": SOLUTION,            # two files, one defines it
        "carol/a.py": SOLUTION, "carol/b.py": SOLUTION + "# v2\n",    # two define it: ambiguous
        "dave/README.md": "no code",                                  # nothing to grade
        "erin/src/deep/answer.py": SOLUTION,                          # nested deeper
    })
    intake = find_submissions(root, FUNCTION)
    assert {s.student: s.source for s in intake.submissions} == {
        "alice": "alice/solution.py", "bob": "bob/main.py", "erin": "erin/src/deep/answer.py"}
    assert reasons(intake) == {"carol": "ambiguous", "dave": "no_python"}
    assert "README.md" in next(p.message for p in intake.problems if p.student == "dave")


def test_two_entries_for_one_student_grade_neither_and_say_so(tmp_path):
    root = write(tmp_path / "class", {"alice.py": SOLUTION, "alice/solution.py": SOLUTION + "# other\n",
                                      "bob.py": SOLUTION})
    intake = find_submissions(root, FUNCTION)
    assert [s.student for s in intake.submissions] == ["bob"]
    duplicates = [p for p in intake.problems if p.reason == "duplicate"]
    assert {p.source for p in duplicates} == {"alice.py", "alice/solution.py"}
    assert all(p.student == "alice" for p in duplicates)


@pytest.mark.parametrize("wrapper", ["", "export-2026-11-29/"])
def test_a_zip_gives_the_same_submissions_as_the_folder(tmp_path, wrapper):
    files = {"alice.py": SOLUTION, "bob/main.py": SOLUTION + "# bob\n", "bob/helpers.py": HELPER,
             "notes.txt": "x", "__MACOSX/._alice.py": "resource fork"}
    folder = find_submissions(write(tmp_path / "class", files), FUNCTION)
    archive = zip_of(tmp_path / "class.zip", {wrapper + name: content for name, content in files.items()})
    unpacked = tmp_path / "unpacked"
    zipped = find_submissions(archive, FUNCTION, unpack_to=unpacked)
    assert [(s.student, s.sha256) for s in zipped.submissions] == [(s.student, s.sha256) for s in folder.submissions]
    assert [s.source for s in zipped.submissions] == [f"class.zip:{wrapper}alice.py", f"class.zip:{wrapper}bob/main.py"]
    assert all(s.path.is_file() and unpacked in s.path.parents for s in zipped.submissions)
    assert [p.reason for p in zipped.problems] == ["not_python"]
    assert not any("MACOSX" in str(p) for p in unpacked.rglob("*"))


def test_zip_slip_members_are_refused_and_nothing_lands_outside(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("alice.py", SOLUTION)
        handle.writestr("../escaped.py", SOLUTION)
        handle.writestr("/tmp/absolute.py", SOLUTION)
        handle.writestr("sub/../../also_escaped.py", SOLUTION)
        link = zipfile.ZipInfo("linked.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        handle.writestr(link, "/etc/passwd")
    unpacked = tmp_path / "inside" / "unpacked"
    intake = find_submissions(archive, FUNCTION, unpack_to=unpacked)
    assert [s.student for s in intake.submissions] == ["alice"]
    assert sorted(p.reason for p in intake.problems) == ["unsafe"] * 4
    written = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.py")}
    assert written == {"inside/unpacked/alice.py"}
    assert not any(p.is_symlink() for p in unpacked.rglob("*"))


def test_a_zip_bomb_member_is_reported_without_unpacking_it(tmp_path):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        handle.writestr("alice.py", SOLUTION)
        handle.writestr("bomb.py", b"#" * (64 * MAX_FILE_BYTES))  # 64 MiB of '#', a few kB compressed
    assert archive.stat().st_size < MAX_FILE_BYTES
    unpacked = tmp_path / "unpacked"
    intake = find_submissions(archive, FUNCTION, unpack_to=unpacked)
    assert [s.student for s in intake.submissions] == ["alice"]
    assert reasons(intake) == {"bomb.zip:bomb.py": "too_large"}
    assert sum(p.stat().st_size for p in unpacked.rglob("*") if p.is_file()) < MAX_FILE_BYTES


def test_a_corrupt_member_is_unreadable_and_the_others_are_graded(tmp_path):
    archive = zip_of(tmp_path / "class.zip", {"alice.py": SOLUTION, "bob.py": SOLUTION * 40})
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as handle:
        bob = handle.getinfo("bob.py")
    body = bob.header_offset + 30 + len(bob.filename) + len(bob.extra)
    data[body + 10] ^= 0xFF  # inside bob's compressed bytes: the CRC check fails
    archive.write_bytes(bytes(data))
    intake = find_submissions(archive, FUNCTION, unpack_to=tmp_path / "unpacked")
    assert [s.student for s in intake.submissions] == ["alice"]
    assert reasons(intake) == {"class.zip:bob.py": "unreadable"}


def test_a_too_large_file_in_a_folder_is_reported(tmp_path):
    root = write(tmp_path / "class", {"alice.py": SOLUTION, "big.py": b"#" * (MAX_FILE_BYTES + 1)})
    intake = find_submissions(root, FUNCTION)
    assert [s.student for s in intake.submissions] == ["alice"]
    assert reasons(intake) == {"big.py": "too_large"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_reported(tmp_path):
    root = write(tmp_path / "class", {"alice.py": SOLUTION, "bob.py": SOLUTION})
    (root / "bob.py").chmod(0)
    intake = find_submissions(root, FUNCTION)
    assert reasons(intake) == {"bob.py": "unreadable"}


def test_inputs_that_cannot_be_read_at_all_are_errors_that_say_what_to_give(tmp_path):
    with pytest.raises(IntakeError, match="no such file or folder"):
        find_submissions(tmp_path / "missing", FUNCTION)
    not_zip = tmp_path / "class.tar"
    not_zip.write_bytes(b"not an archive")
    with pytest.raises(IntakeError, match="neither a folder nor a .zip"):
        find_submissions(not_zip, FUNCTION)


def test_the_graders_own_output_inside_the_folder_is_not_a_student(tmp_path):
    root = write(tmp_path / "class", {"alice.py": SOLUTION, "out/students/alice/report.md": "# report",
                                      "out/gradebook.csv": "student"})
    intake = find_submissions(root, FUNCTION, skip=(root / "out",))
    assert [s.student for s in intake.submissions] == ["alice"] and intake.problems == []


def finishes(function, *args, timeout: float = 20.0, **kwargs):
    """Run ``function`` in a thread; fail (instead of hanging) if it blocks, as opening a FIFO would."""
    result: list = []
    worker = threading.Thread(target=lambda: result.append(function(*args, **kwargs)), daemon=True)
    worker.start()
    worker.join(timeout)
    assert not worker.is_alive(), f"{function.__name__} blocked: it opened something it must not open"
    return result[0]


# --- links (#13.5) ----------------------------------------------------------------------------------------


def test_links_that_leave_the_students_folder_are_refused_unread(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text(SOLUTION + "# the grader's secret\n")
    secret.chmod(0o600)
    outside_pipe = tmp_path / "outside.fifo"
    os.mkfifo(outside_pipe)  # reading through a link to it would block: the test would hang
    root = write(tmp_path / "class", {"alice/solution.py": SOLUTION, "erin/lib/real.py": SOLUTION + "# erin\n",
                                      "frank/solution.py": SOLUTION + "# frank\n", "outside/x.py": SOLUTION})
    (root / "bob").mkdir()
    (root / "bob" / "solution.py").symlink_to(secret)                       # a root-only file
    (root / "carol").mkdir()
    (root / "carol" / "solution.py").symlink_to("../alice/solution.py")     # a classmate's file
    (root / "dave.py").symlink_to(root / "alice" / "solution.py")           # a link in the class folder itself
    (root / "erin" / "main.py").symlink_to("lib/real.py")                   # the student's own file: allowed
    (root / "frank" / "lib").symlink_to(tmp_path)                           # a folder outside: not followed
    (root / "gina").mkdir()
    (root / "gina" / "solution.py").symlink_to(outside_pipe)
    intake = finishes(find_submissions, root, FUNCTION)
    graded = {s.student: s for s in intake.submissions}
    assert sorted(graded) == ["alice", "erin", "frank", "outside"]
    assert graded["erin"].path == (root / "erin" / "lib" / "real.py").resolve()  # the link and its target: one file
    secret_sha = hashlib.sha256(secret.read_bytes()).hexdigest()
    assert all(s.sha256 != secret_sha and s.path.resolve() != secret for s in intake.submissions)
    assert reasons(intake) == {"bob/solution.py": "link", "carol/solution.py": "link", "dave.py": "link",
                               "frank/lib": "link", "gina/solution.py": "link"}
    by_student = {p.student: p for p in intake.problems}
    assert "outside the student's own folder" in by_student["bob"].message
    assert "in the class folder" in by_student["dave"].message
    assert "secret" not in repr(intake)
    assert intake.students == ["alice", "bob", "carol", "dave", "erin", "frank", "gina", "outside"]


# --- special files (#13.8) --------------------------------------------------------------------------------


def test_fifos_sockets_and_devices_are_listed_as_not_graded_and_never_opened(tmp_path):
    root = write(tmp_path / "class", {"alice.py": SOLUTION, "bob/solution.py": SOLUTION + "# bob\n"})
    os.mkfifo(root / "carol.py")                  # a student's "file" that is a FIFO
    os.mkfifo(root / "bob" / "pipe")              # beside a real solution: listed, bob still graded
    (root / "dave").mkdir()
    os.mkfifo(root / "dave" / "solution.py")      # the only .py of a folder
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(root / "erin.py"))          # a socket
    expected = {"carol.py": "special", "bob/pipe": "special", "dave/solution.py": "special", "erin.py": "special"}
    if os.geteuid() == 0:                         # only root may make a device file: a copy of /dev/zero
        os.mknod(root / "frank.py", stat.S_IFCHR | 0o600, os.makedev(1, 5))
        expected["frank.py"] = "special"
    try:
        intake = finishes(find_submissions, root, FUNCTION)
    finally:
        listener.close()
    assert [s.student for s in intake.submissions] == ["alice", "bob"]
    assert reasons(intake) == expected
    messages = {p.source: p.message for p in intake.problems}
    assert "FIFO" in messages["carol.py"] and "not opened" in messages["carol.py"]
    assert "socket" in messages["erin.py"]
    assert "frank.py" not in messages or "device" in messages["frank.py"]
    assert {p.student for p in intake.problems} >= {"bob", "carol", "dave", "erin"}


# --- names that are not UTF-8 (#13.7) ---------------------------------------------------------------------


def test_names_that_are_not_utf8_are_shown_escaped_and_graded_from_a_clean_copy(tmp_path):
    root = tmp_path / "class"
    root.mkdir()
    (root / "alice.py").write_text(SOLUTION)
    raw_root = os.fsencode(root)
    with open(os.path.join(raw_root, b"caf\xe9.py"), "w") as handle:
        handle.write(SOLUTION + "# cafe\n")
    os.mkdir(os.path.join(raw_root, b"j\xf6rg"))
    with open(os.path.join(raw_root, b"j\xf6rg", b"solution.py"), "w") as handle:
        handle.write(SOLUTION + "# jorg\n")
    unpacked = tmp_path / "unpacked"
    intake = find_submissions(root, FUNCTION, unpack_to=unpacked)
    graded = {s.student: s for s in intake.submissions}
    assert sorted(graded) == ["alice", "caf\\xe9", "j\\xf6rg"]
    cafe = graded["caf\\xe9"]
    assert cafe.source == "caf\\xe9.py" and graded["j\\xf6rg"].source == "j\\xf6rg/solution.py"
    # The child compiles code under its file's name, which must be UTF-8: it gets a clean copy, same bytes.
    assert cafe.path.name == "caf_xe9.py" and unpacked in cafe.path.parents
    assert cafe.path.read_text() == SOLUTION + "# cafe\n"
    assert cafe.sha256 == hashlib.sha256((SOLUTION + "# cafe\n").encode()).hexdigest()
    assert stat.S_IMODE(cafe.path.stat().st_mode) == 0o600
    assert str((unpacked / "renamed").resolve()) in cafe.others  # classmates' copies are hidden too
    for submission in intake.submissions:
        submission.student.encode("utf-8")  # every name is text any writer accepts
        submission.source.encode("utf-8")
    without = find_submissions(root, FUNCTION)  # no folder for copies: graded in place
    assert {s.student for s in without.submissions} == set(graded)


# --- zips: clashes, overlong and undecodable names (#13.8) ------------------------------------------------


def _zip_with_bad_utf8_name(path: Path, good: dict[str, str], bad_name: bytes) -> Path:
    """A zip whose entry ``bad_name`` is flagged UTF-8 but is not (as some zip tools write)."""
    placeholder = "\u00e9" + "x" * (len(bad_name) - 2)
    assert len(placeholder.encode()) == len(bad_name)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in good.items():
            archive.writestr(name, content)
        archive.writestr(placeholder, SOLUTION)  # non-ASCII: zipfile sets the UTF-8 flag
    data = buffer.getvalue().replace(placeholder.encode(), bad_name)
    path.write_bytes(data)
    return path


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_zip_members_that_clash_or_have_bad_names_are_not_graded_and_the_rest_is(tmp_path):
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("alice.py", SOLUTION)
        handle.writestr("bob.py", SOLUTION + "# bob\n")          # a file named bob.py ...
        handle.writestr("bob.py/solution.py", SOLUTION)          # ... and a folder of the same name
        handle.writestr("carol.py", SOLUTION)
        handle.writestr("carol.py", SOLUTION + "# again\n")      # the same name twice
        handle.writestr("d" * 300 + ".py", SOLUTION)             # longer than any file system takes
        handle.writestr("erin/" + "e" * 260 + "/solution.py", SOLUTION)
        handle.writestr("frank.py", SOLUTION + "# frank\n")
    unpacked = tmp_path / "unpacked"
    intake = find_submissions(archive, FUNCTION, unpack_to=unpacked)
    assert [s.student for s in intake.submissions] == ["alice", "frank"]
    found = reasons(intake)
    assert found["class.zip:bob.py"] == "clash" and found["class.zip:bob.py/solution.py"] == "clash"
    assert found["class.zip:carol.py"] == "clash"
    assert found[f"class.zip:{'d' * 300}.py"] == "bad_name"
    assert found[f"class.zip:erin/{'e' * 260}/solution.py"] == "bad_name"
    assert {p.student for p in intake.problems} >= {"bob", "carol", "d" * 300, "erin"}


def test_a_zip_name_flagged_utf8_that_is_not_is_one_not_graded_entry(tmp_path):
    archive = _zip_with_bad_utf8_name(tmp_path / "class.zip", {"alice.py": SOLUTION, "b\u00f6b.py": SOLUTION},
                                      b"bad\xff\xfe.py")
    with pytest.raises(UnicodeDecodeError):
        zipfile.ZipFile(archive)  # what crashed the whole run before
    intake = find_submissions(archive, FUNCTION, unpack_to=tmp_path / "unpacked")
    assert [s.student for s in intake.submissions] == ["alice", "b\u00f6b"]  # good UTF-8 names still decode
    assert reasons(intake) == {"class.zip:bad\\xff\\xfe.py": "bad_name"}
    assert all(s.path.read_text() == SOLUTION for s in intake.submissions)


# --- Canvas and Moodle downloads (#14.3) ------------------------------------------------------------------

CANVAS = {
    "doejane_12345_67890_solution.py": SOLUTION,                   # first upload
    "doejane_12345_67999_solution-1.py": SOLUTION + "# fixed\n",   # resubmitted: the latest wins
    "doejane_12345_67891_helpers.py": HELPER,                      # a helper: does not define the function
    "roebob_LATE_222_333_main.py": SOLUTION + "# bob\n",
    "o_neilpat_777_888_answer.py": SOLUTION + "# pat\n",           # an underscore in the sortable name
    "smithann_444_text.html": "<p>my answer is in the text</p>",   # online text only
    "anon_Ab3x9_555_sol.py": SOLUTION + "# anonymous\n",           # anonymous grading
    "LATE_anon_Zz9_556_sol.py": SOLUTION + "# anonymous, late\n",
}


def test_a_canvas_download_gives_one_row_per_student_keyed_by_user_id(tmp_path):
    intake = find_submissions(write(tmp_path / "class", CANVAS), FUNCTION)
    assert intake.layout == "canvas"
    graded = {s.student: s for s in intake.submissions}
    assert sorted(graded) == ["12345", "222", "777", "anon_Ab3x9", "anon_Zz9"]
    jane = graded["12345"]
    assert (jane.name, jane.late, jane.source) == ("doejane", False, "doejane_12345_67999_solution-1.py")
    assert (graded["222"].name, graded["222"].late) == ("roebob", True)
    assert graded["777"].name == "o_neilpat"
    assert (graded["anon_Ab3x9"].name, graded["anon_Ab3x9"].late, graded["anon_Zz9"].late) == (None, False, True)
    assert [(p.student, p.reason, p.name) for p in intake.problems] == [("444", "no_python", "smithann")]
    assert "smithann_444_text.html" in intake.problems[0].message
    assert intake.names["12345"] == "doejane" and intake.names["444"] == "smithann"


def test_canvas_keys_are_stable_across_re_downloads(tmp_path):
    first = find_submissions(write(tmp_path / "first", CANVAS), FUNCTION)
    # A later download: new attachment ids, jane resubmitted again, bob's LATE mark the same.
    later = {re.sub(r"_(\d+)_(\d+)_", lambda m: f"_{m.group(1)}_{int(m.group(2)) + 1000}_", name, count=1): content
             for name, content in CANVAS.items()}
    later["doejane_12345_69000_solution-2.py"] = SOLUTION + "# fixed twice\n"
    second = find_submissions(write(tmp_path / "second", later), FUNCTION)
    assert [s.student for s in second.submissions] == [s.student for s in first.submissions]
    assert next(s for s in second.submissions if s.student == "12345").source.endswith("_solution-2.py")


def test_two_different_files_defining_the_function_are_ambiguous_in_canvas_too(tmp_path):
    intake = find_submissions(write(tmp_path / "class", {"doejane_12345_1_a.py": SOLUTION,
                                                         "doejane_12345_2_b.py": SOLUTION + "# b\n",
                                                         "roebob_222_3_main.py": SOLUTION}), FUNCTION)
    assert [s.student for s in intake.submissions] == ["222"]
    assert [(p.student, p.reason) for p in intake.problems] == [("12345", "ambiguous")]


def test_one_entry_that_is_not_canvas_keeps_the_plain_layout(tmp_path):
    intake = find_submissions(write(tmp_path / "class", {"doejane_12345_67890_solution.py": SOLUTION,
                                                         "alice.py": SOLUTION + "# alice\n"}), FUNCTION)
    assert intake.layout == "files"
    assert [s.student for s in intake.submissions] == ["alice", "doejane_12345_67890_solution"]


MOODLE = {
    "Jane Doe_1234567_assignsubmission_file_/solution.py": SOLUTION,
    "Jane Doe_1234567_assignsubmission_onlinetext_/onlinetext.html": "<p>notes</p>",
    "Bob Roe_7654321_assignsubmission_onlinetext_/onlinetext.html": "<p>only text</p>",
    "Al Li_5555_assignsubmission_file_/src/main.py": SOLUTION + "# al\n",
    "Al Li_5555_assignsubmission_file_/util.py": HELPER,
    "Group A-Cy Ng_42_assignsubmission_file_/answer.py": SOLUTION + "# cy\n",
}


@pytest.mark.parametrize("zipped", [False, True])
def test_a_moodle_download_gives_one_row_per_participant_and_leaves_online_text_aside(tmp_path, zipped):
    if zipped:
        source = zip_of(tmp_path / "moodle.zip", {f"Lab 3-2026/{name}": content for name, content in MOODLE.items()})
        intake = find_submissions(source, FUNCTION, unpack_to=tmp_path / "unpacked")
    else:
        intake = find_submissions(write(tmp_path / "class", MOODLE), FUNCTION)
    assert intake.layout == "moodle"
    graded = {s.student: s for s in intake.submissions}
    assert sorted(graded) == ["1234567", "42", "5555"]
    assert (graded["1234567"].name, graded["5555"].name, graded["42"].name) == ("Jane Doe", "Al Li", "Group A-Cy Ng")
    assert graded["5555"].source.endswith("Al Li_5555_assignsubmission_file_/src/main.py")
    assert [(p.student, p.reason, p.name) for p in intake.problems] == [("7654321", "no_python", "Bob Roe")]
    assert "online text" in intake.problems[0].message
    assert len(intake.notes) == 1 and intake.notes[0].startswith("2 Moodle folders of online text")


def test_moodle_without_folders_is_recognised_too(tmp_path):
    flat = {"Jane Doe_1234567_assignsubmission_file_solution.py": SOLUTION,
            "Bob Roe_7654321_assignsubmission_file_main.py": SOLUTION + "# bob\n",
            "Bob Roe_7654321_assignsubmission_onlinetext_onlinetext.html": "<p>x</p>"}
    intake = find_submissions(write(tmp_path / "class", flat), FUNCTION)
    assert intake.layout == "moodle"
    assert [(s.student, s.name) for s in intake.submissions] == [("1234567", "Jane Doe"), ("7654321", "Bob Roe")]
    assert intake.problems == []


# --- names students control that imitate the LMS's (#25) ----------------------------------------------------

def test_a_canvas_sortable_name_ending_in_an_id_cannot_take_that_users_row(tmp_path):
    # mallory (user 2001) has the sortable name "mallory_1002": her file reads as user 1002's too
    intake = find_submissions(write(tmp_path / "class", {
        "mallory_1002_2001_555_solution.py": SOLUTION + "# mallory\n",
        "bob_1002_556_solution.py": SOLUTION + "# bob\n",
        "çé\u0301dric_3003_557_solution.py": SOLUTION + "# cedric, a combining mark in his name\n"}), FUNCTION)
    graded = {s.student: s for s in intake.submissions}
    assert intake.layout == "canvas" and intake.problems == []
    assert (graded["1002"].name, graded["2001"].name) == ("bob", "mallory_1002")
    assert graded["3003"].name == "çé\u0301dric"


def test_a_canvas_name_that_hides_a_late_mark_is_not_graded_as_someone_elses(tmp_path):
    # "latecomer_1005_7" submitted late as user 2002: read lazily, it was user 1005's on-time file
    intake = find_submissions(write(tmp_path / "class", {
        "latecomer_1005_7_LATE_2002_558_solution.py": SOLUTION + "# late\n",
        "ann_1005_559_solution.py": SOLUTION + "# ann\n"}), FUNCTION)
    graded = {s.student: s for s in intake.submissions}
    assert (graded["2002"].name, graded["2002"].late) == ("latecomer_1005_7", True)
    assert (graded["1005"].name, graded["1005"].late) == ("ann", False)
    # with nobody else to agree with, two readings stay: the file is listed, no row is taken
    alone = find_submissions(write(tmp_path / "alone", {
        "latecomer_1005_7_LATE_2002_558_solution.py": SOLUTION, "ann_3_560_solution.py": SOLUTION}), FUNCTION)
    assert [s.student for s in alone.submissions] == ["3"]
    assert [(p.student, p.reason) for p in alone.problems] == [(None, "ambiguous")]
    assert "user 1005" in alone.problems[0].message and "user 2002" in alone.problems[0].message


def test_a_stray_file_in_a_canvas_download_is_listed_not_a_reason_to_drop_the_layout(tmp_path):
    intake = find_submissions(write(tmp_path / "class", {**CANVAS, "README.py": "# notes\n"}), FUNCTION)
    assert intake.layout == "canvas"
    assert sorted(s.student for s in intake.submissions) == ["12345", "222", "777", "anon_Ab3x9", "anon_Zz9"]
    assert ("README.py", None, "bad_name") in [(p.source, p.student, p.reason) for p in intake.problems]


def test_a_moodle_file_name_imitating_another_participant_stays_its_owners(tmp_path):
    # Moodle writes names with '_' made spaces: the first '_' ends the name
    flat = {"Mallory Smith_2001_assignsubmission_file_Mallory_1002_assignsubmission_file_x.py": SOLUTION + "# m\n",
            "Bob Roe_1002_assignsubmission_file_main.py": SOLUTION + "# bob\n"}
    intake = find_submissions(write(tmp_path / "flat", flat), FUNCTION)
    graded = {s.student: s for s in intake.submissions}
    assert intake.layout == "moodle" and intake.problems == []
    assert (graded["2001"].name, graded["1002"].name) == ("Mallory Smith", "Bob Roe")
    folders = {"Mallory 1002 assignsubmission file x_2001_assignsubmission_file_/solution.py": SOLUTION,
               "Bob Roe_1002_assignsubmission_file_/main.py": SOLUTION + "# bob\n"}
    intake = find_submissions(write(tmp_path / "folders", folders), FUNCTION)
    assert sorted(s.student for s in intake.submissions) == ["1002", "2001"] and intake.problems == []


def test_zip_names_without_the_utf8_flag_are_read_as_the_tool_wrote_them(tmp_path):
    """UTF-8 bytes without the flag (macOS, Java) and cp437 bytes (old Windows tools) both name
    their Canvas student, so one such name cannot turn the download into plain files."""
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for name, content in (("müller_11_21_sol.py", SOLUTION), ("øre_12_22_sol.py", SOLUTION + "# 2\n")):
            info = zipfile.ZipInfo(name)
            handle.writestr(info, content)
    raw = archive.read_bytes()
    # zipfile flags non-ASCII names as UTF-8: clear the flags, as tools that do not set them write
    for name in (b"m\xc3\xbcller_11_21_sol.py", b"\xc3\xb8re_12_22_sol.py"):
        assert raw.count(name) == 2
    patched = bytearray(raw)
    for signature, offset in ((b"PK\x03\x04", 7), (b"PK\x01\x02", 9)):
        at = patched.find(signature)
        while at >= 0:
            patched[at + offset] &= ~0x08
            at = patched.find(signature, at + 4)
    archive.write_bytes(bytes(patched))
    old_windows = tmp_path / "cp437.zip"
    with zipfile.ZipFile(old_windows, "w") as handle:
        handle.writestr("ana_31_41_sol.py", SOLUTION)
    blob = old_windows.read_bytes().replace(b"ana_31_41", "äna_31_41".encode("cp437"))
    old_windows.write_bytes(blob)
    for zipped, expected in ((archive, {"11": "müller", "12": "øre"}), (old_windows, {"31": "äna"})):
        intake = find_submissions(zipped, FUNCTION, tmp_path / f"unpack-{zipped.stem}")
        assert intake.layout == "canvas" and intake.problems == [], intake.problems
        assert {s.student: s.name for s in intake.submissions} == expected


PACKAGED = "from pkg.mesh import total\nimport helpers\n\ndef replicated_sharding_value(x):\n    return total(x)\n"


def test_a_submission_keeps_its_package_and_leaves_out_what_it_does_not_import(tmp_path):
    root = write(tmp_path / "class", {
        "erin/solution.py": PACKAGED, "erin/helpers.py": HELPER, "erin/__init__.py": "",
        "erin/pkg/__init__.py": "from . import mesh\n", "erin/pkg/mesh.py": "from .sums import total\n",
        "erin/pkg/sums.py": "import jax.numpy as jnp\n\ndef total(x):\n    return jnp.sum(x)\n",
        "erin/tests/__init__.py": "", "erin/tests/solution.py": "from solution import *\n",
        "erin/tests/test_solution.py": "import solution\n", "erin/scratch.py": "print('not imported')\n",
        "alice/solution.py": SOLUTION})
    intake = find_submissions(root, FUNCTION, tmp_path / "unpack")
    erin = next(s for s in intake.submissions if s.student == "erin")
    assert intake.problems == [] and erin.path == root / "erin" / "solution.py"
    assert sorted(h.relative_to(erin.path.parent).as_posix() for h in erin.helpers) == [
        "helpers.py", "pkg/__init__.py", "pkg/mesh.py", "pkg/sums.py"]


def test_canvas_uploads_are_imported_by_the_names_the_student_gave_them(tmp_path):
    intake = find_submissions(write(tmp_path / "class", {
        "doejane_12345_67890_solution.py": "from helpers import helper\n" + SOLUTION,
        "doejane_12345_67891_helpers.py": "def helper():\n    return 0\n",
        "doejane_12345_67892_helpers-1.py": HELPER}), FUNCTION, tmp_path / "unpack")
    [jane] = intake.submissions
    assert [h.relative_to(jane.path.parent).as_posix() for h in jane.helpers] == ["helpers.py"]
    assert jane.helpers[0].read_text() == HELPER  # the latest upload of it
    assert jane.path.read_text().startswith("from helpers import helper")


# --- downloads built as the LMSs build them ------------------------------------------------------------------

def canvas_file(sortable: str, user: int, attachment: int, display: str, late: bool = False) -> str:
    """A file name as Canvas's submissions zip writes it: the sortable name lowercased, each
    character that is not a word character (Unicode letters, marks, digits, '_') or '-' made '-'."""
    name = "".join(c if c == "-" or c == "_" or unicodedata.category(c)[0] in "LMN" else "-" for c in sortable.lower())
    return f"{name}{'_LATE' if late else ''}_{user}_{attachment}_{display}"


def moodle_prefix(full_name: str, participant: int, group: str = "") -> str:
    """The prefix Moodle's "Download all submissions" gives a participant's files: the group
    name and the full name with every '_' made a space, then the participant id."""
    return f"{(f'{group}-' if group else '') + full_name}".replace("_", " ") + f"_{participant}_assignsubmission_file_"


def test_a_canvas_zip_in_several_scripts_with_reuploads_late_and_anonymous_files(tmp_path):
    files = {
        canvas_file("Doe, Jane", 101, 9001, "solution.py"): SOLUTION + "# first\n",
        canvas_file("Doe, Jane", 101, 9050, "solution-1.py"): SOLUTION + "# re-upload\n",
        canvas_file("Иванов, Иван", 102, 9002, "решение.py", late=True): SOLUTION + "# ivan\n",
        canvas_file("王, 小明", 103, 9003, "main.py"): SOLUTION + "# xiaoming\n",
        canvas_file("हिन्दी, नाम", 104, 9004, "answer.py"): SOLUTION + "# devanagari: combining vowel signs\n",
        canvas_file("عَلِيّ, مُحَمَّد", 105, 9005, "sol.py"): SOLUTION + "# arabic with harakat\n",
        canvas_file("mallory_102", 106, 9006, "solution.py"): SOLUTION + "# imitates ivan's id\n",
        "anon_Qx7_9007_work.py": SOLUTION + "# anonymous\n",
    }
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for name, content in files.items():
            handle.writestr(f"submissions/{name}", content)
    intake = find_submissions(archive, FUNCTION, tmp_path / "unpack")
    assert intake.layout == "canvas" and intake.problems == [], intake.problems
    rows = {s.student: (s.name, s.late, s.source.split(":", 1)[1]) for s in intake.submissions}
    assert rows == {
        "101": ("doe--jane", False, "submissions/doe--jane_101_9050_solution-1.py"),
        "102": ("иванов--иван", True, "submissions/иванов--иван_LATE_102_9002_решение.py"),
        "103": ("王--小明", False, "submissions/王--小明_103_9003_main.py"),
        "104": ("हिन्दी--नाम", False, "submissions/हिन्दी--नाम_104_9004_answer.py"),
        "105": ("عَلِيّ--مُحَمَّد", False, "submissions/عَلِيّ--مُحَمَّد_105_9005_sol.py"),
        "106": ("mallory_102", False, "submissions/mallory_102_106_9006_solution.py"),
        "anon_Qx7": (None, False, "submissions/anon_Qx7_9007_work.py")}


def test_a_moodle_zip_with_groups_blind_marking_and_names_in_several_scripts(tmp_path):
    files = {
        moodle_prefix("Jane_Doe", 11) + "/solution.py": SOLUTION,
        moodle_prefix("Иван Иванов", 12, group="Группа_1") + "/main.py": SOLUTION + "# ivan\n",
        moodle_prefix("王小明", 13) + "/src/answer.py": SOLUTION + "# xiaoming\n",
        moodle_prefix("Mallory_14_assignsubmission_file_x", 15) + "/solution.py": SOLUTION + "# mallory\n",
        moodle_prefix("Participant", 16) + "/solution.py": SOLUTION + "# blind marking\n",
        "Jane Doe_11_assignsubmission_onlinetext_/onlinetext.html": "<p>notes</p>",
    }
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for name, content in files.items():
            handle.writestr(name, content)
    intake = find_submissions(archive, FUNCTION, tmp_path / "unpack")
    assert intake.layout == "moodle" and intake.problems == [], intake.problems
    assert {s.student: s.name for s in intake.submissions} == {
        "11": "Jane Doe", "12": "Группа 1-Иван Иванов", "13": "王小明",
        "15": "Mallory 14 assignsubmission file x", "16": "Participant"}


def test_a_stray_entry_in_a_moodle_download_is_listed_and_the_layout_kept(tmp_path):
    folders = {"Jane Doe_11_assignsubmission_file_/solution.py": SOLUTION,
               "Bob Roe_12_assignsubmission_file_/solution.py": SOLUTION + "# bob\n",
               "Cy Ng_13_assignsubmission_file_/solution.py": SOLUTION + "# cy\n",
               "extra/solution.py": SOLUTION + "# who?\n", "index.html": "<p>downloaded with the zip</p>"}
    intake = find_submissions(write(tmp_path / "folders", folders), FUNCTION)
    assert intake.layout == "moodle" and sorted(s.student for s in intake.submissions) == ["11", "12", "13"]
    assert sorted((p.source, p.reason) for p in intake.problems) == [("extra", "bad_name"),
                                                                    ("index.html", "bad_name")]
    flat = {"Jane Doe_11_assignsubmission_file_solution.py": SOLUTION,
            "Bob Roe_12_assignsubmission_file_main.py": SOLUTION + "# bob\n", "solution.py": SOLUTION}
    intake = find_submissions(write(tmp_path / "flat", flat), FUNCTION)
    assert intake.layout == "moodle" and [(p.source, p.reason) for p in intake.problems] == [
        ("solution.py", "bad_name")]
