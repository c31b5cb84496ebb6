"""grader.batch.summary: the class summary's numbers (distribution, pass rates, common failures,
slowest, trouble, identical files) and its two renderings (self-contained HTML, Markdown).
grader.report.safe_text: what students control (file names, messages that quote their code) is
laid out as text, never as markup, in each medium; the histogram has a text alternative that
states every bar's count."""
from __future__ import annotations

import html.parser
import re
from pathlib import Path

import html5lib
import pytest

from grader.batch.intake import Problem
from grader.report.safe_text import for_html, for_markdown, for_terminal, shown_name
from grader.batch.summary import failure_pattern, histogram_text, render_summary, summarize
from grader.batch.throughput import Throughput

from browser import AXE, CHROMIUM, NO_AXE, NO_CHROMIUM, audit

REPO = Path(__file__).resolve().parent.parent

CHECKS = [{"id": "load.function", "title": "Loads", "category": "load", "max_score": 1.0},
          {"id": "value.random_vectors", "title": "Sums random vectors", "category": "value", "max_score": 2.0},
          {"id": "limits.resources", "title": "Within limits", "category": "limits", "max_score": 1.0}]
EXERCISE = {"slug": "demo", "title": "Demo exercise", "version": "3", "fingerprint": "abc123", "max_score": 4.0, "seed": 0,
            "jaxgrade": "0.1.0"}


def result(student: str, statuses: list[str], messages: list[str] | None = None, duration: float = 0.5,
           sha: str | None = None) -> dict:
    points = [c["max_score"] for c in CHECKS]
    checks = [{"id": c["id"], "title": c["title"], "category": c["category"], "status": s,
               "score": p if s == "passed" else 0.0, "max_score": p, "message": m}
              for c, s, p, m in zip(CHECKS, statuses, points, messages or ["ok"] * 3)]
    score = sum(c["score"] for c in checks)
    status = "passed" if score == 4 else ("error" if all(s in ("skipped", "error") for s in statuses) else "failed")
    return {"student": student, "source": f"{student}.py",
            "report": {"score": score, "max_score": 4.0, "status": status, "checks": checks,
                       "duration_s": duration, "submission": {"sha256": sha or student * 4}}}


MEAN_ON = "On x = jnp.array([{}], dtype=jnp.float32), your function returned {}; the exact answer is {}."
RESULTS = [
    result("alice", ["passed"] * 3, duration=0.3, sha="same"),
    result("bob", ["passed", "failed", "passed"], ["ok", MEAN_ON.format("1.0, 2.0", "1.5", "3.0"), "ok"], 0.4),
    result("carol", ["passed", "failed", "passed"], ["ok", MEAN_ON.format("-7.5", "-2.5", "-7.5"), "ok"], 0.9),
    result("dave", ["passed", "failed", "failed"],
           ["ok", "On x = jnp.array([], dtype=jnp.float32), your function did not return", "ran past 5 s"], 5.0),
    result("erin", ["passed"] * 3, duration=0.2, sha="same"),
    result("<script>alert(1)</script>", ["failed", "skipped", "skipped"],
           ["Python cannot parse your file", "Skipped", "Skipped"], 0.1),
]
PROBLEMS = [Problem("frank.py", "frank", "empty", "the file is empty"),
            Problem("notes.txt", None, "not_python", "not a Python file: ignored")]


def data() -> dict:
    return summarize(RESULTS, PROBLEMS, exercise=EXERCISE, checks=CHECKS)


def test_counts_and_scores():
    s = data()
    assert s["counts"] == {"students": 7, "graded": 6, "not_graded": 1, "full_marks": 2, "failed": 4, "error": 0}
    assert s["scores"]["max"] == 4 and s["scores"]["min"] == 0 and s["scores"]["median"] == 2.0
    assert [b["count"] for b in s["histogram"]] == [1, 1, 2, 0, 2]  # scores 0, 1, 2, 2, 4, 4
    assert [b["label"] for b in s["histogram"]] == ["0", "1", "2", "3", "4"]


def test_pass_rate_per_check():
    rows = {c["id"]: c for c in data()["checks"]}
    assert (rows["load.function"]["passed"], rows["load.function"]["failed"]) == (5, 1)
    values = rows["value.random_vectors"]
    assert (values["passed"], values["failed"], values["skipped"], values["total"]) == (2, 3, 1, 6)
    assert abs(values["pass_rate"] - 2 / 6) < 1e-9


def test_the_same_mistake_on_different_inputs_counts_once():
    assert failure_pattern(MEAN_ON.format("1.0, 2.0", "1.5", "3.0")) == failure_pattern(MEAN_ON.format("-7.5", "-2.5", "-7.5"))
    top = data()["failures"][0]
    assert top["check"] == "value.random_vectors" and top["count"] == 2 and top["students"] == ["bob", "carol"]
    assert top["example"] == MEAN_ON.format("1.0, 2.0", "1.5", "3.0")


def test_slowest_trouble_identical_and_not_graded():
    s = data()
    assert [r["student"] for r in s["slowest"]][:3] == ["dave", "carol", "bob"]
    assert [(t["student"], t["kind"]) for t in s["trouble"]] == [("dave", "limit")]
    assert s["identical"] == [["alice", "erin"]]
    assert [(p["source"], p["reason"]) for p in s["problems"]] == [("frank.py", "empty"), ("notes.txt", "not_python")]


class _Collector(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_html_is_self_contained_escaped_and_draws_the_histogram():
    page = render_summary(data(), "html")
    parsed = _Collector()
    parsed.feed(page)
    tags = [t for t, _ in parsed.tags]
    assert "script" not in tags and "link" not in tags and "img" not in tags
    assert not any(a.get("src") or (a.get("href") or "").startswith("http") for _, a in parsed.tags)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    bars = [a for t, a in parsed.tags if t == "rect"]
    assert len(bars) == 5
    heights = [float(a["height"]) for a in bars]
    assert heights[2] == heights[4] == max(heights) and heights[3] == 0  # 2, 2 and 0 students
    assert "Sums random vectors" in page and "33%" in page


def test_markdown_has_the_same_sections():
    text = render_summary(data(), "md")
    for heading in ("Score distribution", "Pass rate per check", "Most common failures", "Errored or hit a limit",
                    "Slowest submissions", "Identical submissions", "Not graded"):
        assert f"## {heading}" in text
    assert re.search(r"\| Sums random vectors \(`value.random_vectors`\) \| value \| 33% \| 2 \| 3 \| 1 \| 0 \|", text)
    assert "| dave | limit | ran past 5 s |" in text


def test_the_summary_names_the_exercise_toml_version_beside_the_fingerprint():
    """The version a course pins, not only the digest of the files a result is keyed by."""
    assert "(version 3, fingerprint abc123)" in render_summary(data(), "md")
    assert "(version 3, fingerprint abc123)" in render_summary(data(), "html")


# --- text from students, per medium (#13.9, #14.9) -------------------------------------------------------

HOSTILE = {
    "script": "<script>alert(1)</script>",
    "img": "<img src=x onerror=alert(1)>",
    "link": "[click me](javascript:alert(1))",
    "autolink": "<javascript:alert(1)>",
    "url": "https://phish.example/login",
    "mention": "@everyone",
    "pipe": "a|b|c",
    "cr": "carriage\rreturn",
    "newline": "new\nline",
    "escape": "\x1b[2J\x1b[31mred",
    "bidi": "evil\u202egnp.py",
    "heading": "# heading",
    "list": "- item",
    "code": "`code` and **bold**",
}


def test_the_summary_states_how_fast_the_run_graded():
    """Submissions a minute, CPU a submission, the workers and the grader's own part (#57)."""
    speed = Throughput(graded=34, seconds=8.5, workers=2, cpu_s=10.2, own_cpu_s=0.51).as_data()
    assert speed == {"graded": 34, "seconds": 8.5, "workers": 2, "per_minute": 240.0, "cpu_s_per_submission": 0.3,
                     "own_share": 0.05}
    line = "34 submissions graded in 8.5 s by 2 workers: 240 a minute, 0.30 s of CPU each (5% of it in the grader's own process)."
    s = summarize(RESULTS, PROBLEMS, exercise=EXERCISE, checks=CHECKS, throughput=speed)
    assert s["throughput_text"] == line
    assert line in render_summary(s, "md")
    assert line.replace("'", "&#39;") in render_summary(s, "html")


def test_a_cluster_run_states_its_speed_without_the_workers_cpu_and_a_run_that_graded_nothing_none():
    elsewhere = Throughput(graded=1, seconds=3.0, workers=12).as_data()
    assert elsewhere["cpu_s_per_submission"] is None and elsewhere["own_share"] is None
    s = summarize(RESULTS, PROBLEMS, exercise=EXERCISE, checks=CHECKS, throughput=elsewhere)
    assert s["throughput_text"] == "1 submission graded in 3.0 s by 12 workers: 20 a minute."
    for speed in (Throughput(graded=0, seconds=0.4, workers=2, cpu_s=0.1, own_cpu_s=0.1).as_data(), None):
        s = summarize(RESULTS, PROBLEMS, exercise=EXERCISE, checks=CHECKS, throughput=speed)
        assert s["throughput_text"] == ""
        assert "a minute" not in render_summary(s, "md") and "a minute" not in render_summary(s, "html")


@pytest.mark.parametrize("text, expected", [
    ("alice", "alice"),
    ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("[x](javascript:alert(1))", "\\[x\\](javascript:\u200balert(1))"),
    ("see https://evil.example", "see https:\u200b//evil.example"),
    ("@everyone", "@\u200beveryone"),
    ("a|b", "a\\|b"),
    ("line\r\nbreak\rand\nmore", "line break and more"),
    ("\x1b[31m", "\\\\x1b\\[31m"),
    ("# title", "\\# title"),
    ("- item", "\\- item"),
    ("3. item", "3\\. item"),
    ("snake_case *x*", "snake\\_case \\*x\\*"),
])
def test_for_markdown_leaves_text_as_text(text, expected):
    assert for_markdown(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("alice", "alice"), ("\x1b[2Jred", "\\x1b[2Jred"), ("a\nb\r", "a\\nb\\r"), ("x\u202ey", "x\\u202ey"),
    ("zero\u200bwidth", "zero\\u200bwidth"), ("caf\udce9", "caf\\xe9"), ("\x7f\x85", "\\x7f\\x85"),
])
def test_for_terminal_escapes_every_unprintable_character(text, expected):
    assert for_terminal(text) == expected


def test_for_html_keeps_newlines_and_tabs_only():
    assert for_html("line 1\n\tline 2\r\n\x1b[31m\x00") == "line 1\n\tline 2\n\\x1b[31m\\x00"


def test_shown_name_writes_undecodable_bytes_as_escapes():
    assert shown_name("caf\udce9.py") == "caf\\xe9.py" and shown_name("café.py") == "café.py"


def _result(student: str, score: float, message: str, source: str | None = None) -> dict:
    status = "passed" if score == 2 else "failed"
    checks = [{"id": "load.function", "title": "Loads", "category": "load", "status": "passed", "score": 1.0,
               "max_score": 1.0, "message": "ok"},
              {"id": "value.random", "title": "Values", "category": "value", "status": status,
               "score": score - 1, "max_score": 1.0, "message": message}]
    return {"student": student, "source": source or f"{student}.py",
            "report": {"score": score, "max_score": 2.0, "status": status, "checks": checks,
                       "duration_s": 0.5, "submission": {"sha256": student.encode().hex()[:64]}}}


@pytest.fixture(scope="module")
def hostile_summary() -> dict:
    results = [_result(name, 1, f"On x = [], your function printed {name}") for name in HOSTILE.values()]
    alice = _result("alice", 2, "ok")
    alice["report"]["duration_s"] = 9.0  # the slowest: listed by name
    results.append(alice)
    problems = [Problem(f"{name}.txt", name + "!", "not_python", f"not a Python file: {name}")
                for name in HOSTILE.values()]
    checks = [{"id": "load.function", "title": "Loads", "category": "load", "max_score": 1.0},
              {"id": "value.random", "title": "Values", "category": "value", "max_score": 1.0}]
    exercise = {"slug": "demo", "title": "Demo", "version": "1", "fingerprint": "f00d", "max_score": 2.0, "seed": 0,
                "jaxgrade": "test"}
    return summarize(results, problems, exercise=exercise, checks=checks,
                     names={"alice": "Alice <b>Liddell</b>"}, notes=["1 folder of <i>online</i> text left aside"])


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_summary_md_passes_no_markup_from_students(hostile_summary):
    md = render_summary(hostile_summary, "md")
    for raw in ("<script", "<img", "<b>", "<i>", "<javascript", "https://", "@everyone", "\r", "\x1b", "\u202e"):
        assert raw not in md, raw
    assert not re.search(r"(?<!\\)\]\(", md)  # no link or image: every "](" has its bracket escaped
    # Every row of every table has the cells of its header: no name or message broke a table.
    lines = md.splitlines()
    tables = 0
    for index, line in enumerate(lines):
        if line.startswith("|---"):
            tables += 1
            header = _unescaped_pipes(lines[index - 1])
            for row in lines[index + 1:]:
                if not row.startswith("|"):
                    break
                assert _unescaped_pipes(row) == header, row
    assert tables == 4  # pass rates, failures, slowest, not graded
    # Block markup cannot start inside a list item either.
    assert not any(re.match(r"^- (#|-|\d+\.)\s", line) for line in lines)
    assert "Alice &lt;b&gt;Liddell&lt;/b&gt; (alice)" in md  # the LMS's name, with its key, escaped


def test_summary_html_has_no_active_content_from_students(hostile_summary):
    html = render_summary(hostile_summary, "html")
    document = html5lib.parse(html, namespaceHTMLElements=False)
    assert document.findall(".//script") == [] and document.findall(".//img") == []
    for element in document.iter():
        assert not any(name.startswith("on") for name in element.attrib), element.tag
        assert not str(element.attrib.get("href", "")).lower().startswith("javascript:")
    assert "\x1b" not in html and "\r" not in html and "\u202e" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_histogram_text_states_every_bars_count(hostile_summary):
    bins = hostile_summary["histogram"]
    text = hostile_summary["histogram_text"]
    assert text == histogram_text(bins)
    assert [int(count) for count in re.findall(r": (\d+) students?", text)] == [b["count"] for b in bins]
    assert "0 points: 0 students; 1 point: " + str(len(HOSTILE)) + " students; 2 points: 1 student." in text
    md, html = render_summary(hostile_summary, "md"), render_summary(hostile_summary, "html")
    assert text in md
    svg = next(e for e in html5lib.parse(html, namespaceHTMLElements=False).iter() if str(e.tag).endswith("}svg"))
    desc = next(e for e in svg.iter() if str(e.tag).endswith("}desc"))
    assert svg.attrib["aria-label"] == text and desc.text == text


def test_histogram_text_for_ten_bins():
    bins = [{"label": f"{i}–{i + 1}", "count": i % 3} for i in range(10)]
    text = histogram_text(bins)
    assert text.count("students") + text.count("student;") + text.count("student.") >= 10
    assert [int(c) for c in re.findall(r": (\d+) students?", text)] == [b["count"] for b in bins]


# --- in a browser: a phone and a desktop (#26.4) -------------------------------------------------------------


@pytest.fixture(scope="module")
def long_summary() -> dict:
    """A class whose names, sources and messages are as long as they come (a path, an unbroken token)."""
    long = "x" * 200
    results = [_result(f"student_{n}_{long}", n % 3, f"On x = jnp.array([{', '.join(['1.0'] * 40)}]): {long}")
               for n in range(12)]
    problems = [Problem(f"{long}/{long}.txt", f"s_{long}", "not_python", f"not a Python file: {long}")]
    checks = [{"id": "load.function", "title": "Loads", "category": "load", "max_score": 1.0},
              {"id": f"value.random_{long}", "title": f"Values {long}", "category": "value", "max_score": 1.0}]
    exercise = {"slug": f"demo_{long}", "title": "Demo", "version": "1", "fingerprint": "f00d", "max_score": 2.0, "seed": 0,
                "jaxgrade": "test"}
    return summarize(results, problems, exercise=exercise, checks=checks, notes=[f"left aside: {long}"])


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
@pytest.mark.skipif(not AXE.is_file(), reason=NO_AXE)
@pytest.mark.parametrize("width", [390, 1280])
def test_summary_html_fits_the_screen_and_axe_finds_nothing(hostile_summary, long_summary, tmp_path, width):
    """The chart scales to the screen, each table scrolls inside its own labelled box, the page
    has its <main> landmark, and axe-core finds no violation (at 390 px: a phone)."""
    for name, summary in {"sample": data(), "hostile names": hostile_summary, "long names": long_summary}.items():
        page = render_summary(summary, "html")
        found = audit(page, width, tmp_path)
        assert found["violations"] == [], f"{name}: {found['violations']}"
        assert found["scroll_width"] <= found["client_width"] == width, f"{name}: too wide, {found}"
    main = html5lib.parse(render_summary(data(), "html"), namespaceHTMLElements=False).findall(".//main")
    assert len(main) == 1 and main[0].find("h1") is not None


# --- the wrong layouts a class produced (#67.3) ------------------------------------------------------------

LAYOUT_CLASS = {"alice": "wrong/structure_half_mesh.py", "bob": "wrong/structure_half_mesh.py",
                "carol": "wrong/structure_mesh_2x4.py", "dave": "wrong/structure_columns.py",
                "erin": "reference.py"}


@pytest.fixture(scope="module")
def layout_class(tmp_path_factory) -> Path:
    """A real class run (``jaxgrade grade``'s grade_class) of shard_rows: two students on half the mesh, one
    on a 2 x 4 grid, one splitting columns, one right."""
    from grader.authoring.exercise import find_exercise
    from grader.batch.run import grade_class
    exercise = find_exercise("shard_rows")
    folder = tmp_path_factory.mktemp("class")
    for student, variant in LAYOUT_CLASS.items():
        (folder / f"{student}.py").write_text((REPO / "exercises" / "shard_rows" / variant).read_text())
    out = tmp_path_factory.mktemp("out")
    outcome = grade_class(exercise, folder, out, jobs=2)
    assert sorted(outcome.graded) == sorted(LAYOUT_CLASS)
    return out


@pytest.mark.slow
def test_the_summary_draws_each_wrong_layout_once_most_common_first(layout_class):
    md = (layout_class / "summary.md").read_text()
    section = md[md.index("## Wrong layouts"):md.index("## Errored or hit a limit")]
    mesh = section[section.index("(`structure.mesh`)"):]
    mesh = mesh[:mesh.index("\n### ")] if "\n### " in mesh else mesh
    # the task's layout, then alice's and bob's (the same, drawn once), then carol's
    assert mesh.index("What the task asks") < mesh.index("**2 students:** alice, bob") < mesh.index(
        "**1 student:** carol")
    assert mesh.count("Mesh('data': 4)") == 1 and "Mesh('data': 2, 'model': 4)" in mesh
    assert "erin" not in section  # right: no wrong layout
    spec = section[section.index("(`structure.spec`)"):]
    assert "**1 student:** dave" in spec and "P(None, 'data')" in spec
    html = html5lib.parse((layout_class / "summary.html").read_text(), namespaceHTMLElements=False)
    labels = [figure.get("aria-label") for figure in html.iter("figure")]
    captions = ["".join(figure.find("table/caption").itertext()) for figure in html.iter("figure")]
    assert any(c.startswith("2 students: alice, bob:") for c in captions)
    # drawn once per check that saw it: the placed x on the mesh check, the result on the result's
    halves = [label for label in labels if label.startswith("2 students: alice, bob: an array of shape (16, 8)")]
    assert len(halves) == 1 and "Mesh('data': 4)" in halves[0] and "[0:4, 0:8] on cpu:0" in halves[0]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
@pytest.mark.skipif(not AXE.is_file(), reason=NO_AXE)
@pytest.mark.parametrize("width", [390, 1280])
def test_the_summary_of_wrong_layouts_passes_axe_and_fits_the_screen(layout_class, tmp_path, width):
    found = audit((layout_class / "summary.html").read_text(), width, tmp_path)
    assert found["violations"] == [], found["violations"]
    assert found["scroll_width"] <= found["client_width"] == width, found
