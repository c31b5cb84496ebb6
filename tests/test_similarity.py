"""Near-identical submissions (grader.batch.similarity): a class run lists, in summary.md and
summary.html, the pairs whose code is the same once the starter's is taken out, renamed variables
and changed comments included, with their similarity; for review, never graded (scores unchanged)."""
from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, SEED_EXERCISE
from grader.batch.similarity import EXACT_UP_TO, THRESHOLD, similar_pairs

REFERENCE = (SEED_EXERCISE / "reference.py").read_text()
STARTER = (SEED_EXERCISE / "starter.py").read_text()
# alice's reference, as a copier hands it in: every variable and the parameter renamed, comments
# and the docstring rewritten, blank lines moved
RENAMED = ('"""My own solution, written from scratch."""\nimport jax\nimport jax.numpy as jnp\nimport numpy as np\n'
           "from jax.sharding import Mesh, NamedSharding, PartitionSpec\n\n\n"
           "def replicated_sharding_value(values: jax.Array) -> jax.Array:\n"
           "    # one device, one axis\n    grid = Mesh(np.array(jax.devices()[:1]), ('data',))\n\n"
           "    on_grid = jax.device_put(values, NamedSharding(grid, PartitionSpec()))  # replicated\n"
           "    return jnp.sum(on_grid, dtype=jnp.float32)\n")
OTHER = (SEED_EXERCISE / "right" / "set_mesh_jax_p.py").read_text()  # another way to the same answer


# every pair compared (a class of up to EXACT_UP_TO), or the index's candidates (a larger one)
WAYS = pytest.mark.parametrize("exact_up_to", [EXACT_UP_TO, 0], ids=["every_pair", "index"])


@WAYS
def test_renamed_variables_and_changed_comments_count_as_the_same(exact_up_to):
    pairs = similar_pairs({"alice": REFERENCE, "bob": RENAMED, "carol": OTHER}, STARTER, exact_up_to=exact_up_to)
    assert [(p.students, p.similarity) for p in pairs] == [(("alice", "bob"), 1.0)]
    assert pairs == similar_pairs({"carol": OTHER, "bob": RENAMED, "alice": REFERENCE}, STARTER,
                                  exact_up_to=exact_up_to)  # deterministic


@WAYS
def test_the_starter_and_unreadable_code_are_never_flagged(exact_up_to):
    """Two untouched starters share only what everyone was given; code Python cannot read has no fingerprint."""
    broken = "def replicated_sharding_value(x:\n    return x.sum(\n"
    assert similar_pairs({"dave": STARTER, "frank": STARTER + "\n# done?\n", "gina": broken, "hal": broken},
                         STARTER, exact_up_to=exact_up_to) == []


@WAYS
def test_a_changed_line_lowers_the_figure_and_byte_identical_files_are_left_to_their_own_list(exact_up_to):
    edited = RENAMED.replace("dtype=jnp.float32", "dtype='float32'")
    pairs = similar_pairs({"alice": REFERENCE, "bob": edited, "erin": REFERENCE}, STARTER,
                          identical=[["alice", "erin"]], exact_up_to=exact_up_to)
    assert [p.students for p in pairs] == [("alice", "bob"), ("bob", "erin")]
    assert all(THRESHOLD <= p.similarity < 1 for p in pairs) and pairs[0].similarity == pairs[1].similarity


def test_a_class_compared_pair_by_pair_never_imports_the_index():
    """datasketch's import, with SciPy's, costs 0.5-2 s of CPU: more than a small class's grading gains."""
    code = ("import sys\nfrom grader.batch.similarity import similar_pairs\n"
            f"pairs = similar_pairs({{'alice': {REFERENCE!r}, 'bob': {RENAMED!r}}}, {STARTER!r})\n"
            "print(len(pairs), 'datasketch' in sys.modules, 'scipy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["1", "False", "False"], done.stderr[-2000:]


@pytest.mark.slow
def test_a_class_run_lists_the_copied_submission_in_the_summary(tmp_path):
    submissions = tmp_path / "class"
    submissions.mkdir()
    for student, code in {"alice": REFERENCE, "bob": RENAMED, "carol": OTHER, "dave": STARTER,
                          "erin": REFERENCE}.items():
        (submissions / f"{student}.py").write_text(code)
    done = subprocess.run([sys.executable, "-m", "grader", "grade", str(submissions), "-e", SEED_EXERCISE.name,
                           "-o", str(tmp_path / "out"), "-j", "2"], cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    markdown = (tmp_path / "out" / "summary.md").read_text()
    section = markdown.split("## Similar submissions", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\w+), (\w+) \| (\d+)% \| (\d+) \|$", section, re.MULTILINE)
    assert [(a, b, percent) for a, b, percent, _ in rows] == [("alice", "bob", "100"), ("bob", "erin", "100")]
    assert "for review, not graded" in section
    page = (tmp_path / "out" / "summary.html").read_text()
    assert "<h2>Similar submissions</h2>" in page and "<td>alice, bob</td><td>100%</td>" in page
    book = {row["student"]: row for row in csv.DictReader(io.StringIO((tmp_path / "out" / "gradebook.csv").read_text()))}
    assert book["bob"]["score"] == book["alice"]["score"] == "10"  # flagged, not graded: the score is the score
    shutil.rmtree(tmp_path / "out")
