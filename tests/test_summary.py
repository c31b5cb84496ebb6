"""grader.batch.summary: the class summary's numbers (distribution, pass rates, common failures,
slowest, trouble, identical files) and its two renderings (self-contained HTML, Markdown)."""
from __future__ import annotations

import html.parser
import re

from grader.batch.intake import Problem
from grader.batch.summary import failure_pattern, render_summary, summarize

CHECKS = [{"id": "load.function", "title": "Loads", "category": "load", "max_score": 1.0},
          {"id": "value.random_vectors", "title": "Sums random vectors", "category": "value", "max_score": 2.0},
          {"id": "limits.resources", "title": "Within limits", "category": "limits", "max_score": 1.0}]
EXERCISE = {"slug": "demo", "title": "Demo exercise", "version": "abc123", "max_score": 4.0, "seed": 0,
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
