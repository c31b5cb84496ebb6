"""grader.batch.intake: folders, per-student folders and zips as LMSs export them; every entry that
cannot be graded is reported, none is fatal; zips are unpacked safely (no zip-slip, no bomb)."""
from __future__ import annotations

import hashlib
import os
import stat
import zipfile
from pathlib import Path

import pytest

from grader.batch.intake import MAX_FILE_BYTES, find_submissions
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
    assert [s.student for s in intake.submissions] == ["alice", "bob"]
    alice = intake.submissions[0]
    assert alice.source == "alice.py" and alice.sha256 == hashlib.sha256(SOLUTION.encode()).hexdigest()
    assert reasons(intake) == {"empty.py": "empty", "notes.txt": "not_python", "carol.ipynb": "not_python"}
    notebook = next(p for p in intake.problems if p.source == "carol.ipynb")
    assert "export notebooks as .py" in notebook.message
    assert intake.students == ["alice", "bob", "empty"]


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


def test_a_link_to_a_file_counts_as_that_file(tmp_path):
    root = write(tmp_path / "class", {"alice.py": SOLUTION})
    (tmp_path / "elsewhere.py").write_text(SOLUTION + "# bob\n")
    (root / "bob.py").symlink_to(tmp_path / "elsewhere.py")
    intake = find_submissions(root, FUNCTION)
    assert [s.student for s in intake.submissions] == ["alice", "bob"]
