"""The class summary: what an instructor reads after grading a whole class.

:func:`summarize` turns the graded results and the intake's problems into plain data (score
distribution, pass rate per check, the most common failure messages, the wrong layouts
students' code produced for each placement check, the slowest submissions, those that errored
or hit a limit, identical submissions, near-identical ones (grader.batch.similarity: for
review, never graded), entries that were not graded); :func:`write_summary` lays it out as
``summary.html`` (self-contained: inline CSS and an inline SVG histogram, no scripts, nothing
fetched) and ``summary.md``.

Names and messages come from students. Every value either template prints loses its control
characters (:func:`grader.report.safe_text.for_html`); the HTML template is autoescaped, and the
Markdown template passes every student-controlled value through the ``md`` filter
(:func:`grader.report.safe_text.for_markdown`: no raw HTML, links, mentions or broken tables).
The histogram has a text alternative that states every bar's count.
"""
from __future__ import annotations

import datetime as dt
import json
import math
import re
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from grader.batch.gradebook import write_atomically
from grader.batch.throughput import describe
from grader.batch.similarity import SHINGLE, SimilarPair
from grader.batch.submissions import Problem
from grader.report.layout_picture import grid_text, titled_grid
from grader.report.render import codeblock, templates_root
from grader.report.safe_text import for_html, for_markdown

TOP_FAILURES = 10
TOP_SLOWEST = 5
MAX_NAMES = 8
MAX_SIMILAR = 50  # pairs listed; the rest are counted

_ARRAY = re.compile(r"jnp\.array\(\[[^\]]*\](?:, dtype=[\w.]+)?\)|<float32 array of [^>]*>|np\.asarray\([^)]*\)"
                    r"|\[[-+0-9.,e\s]*\]")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?(?![\w])|\b(?:nan|-?inf)\b")


def failure_pattern(message: str) -> str:
    """The message with its particulars (inputs, numbers) masked, so that the same mistake made
    on different inputs counts as one."""
    text = _NUMBER.sub("N", _ARRAY.sub("x", message))
    return text if len(text) <= 240 else text[:237] + "..."


def _histogram(scores: Sequence[float], max_score: float) -> list[dict[str, Any]]:
    """One bin per point when the maximum is small and whole, else ten equal bins."""
    if max_score <= 0:
        return []
    if max_score <= 20 and float(max_score).is_integer():
        edges = [float(i) for i in range(int(max_score) + 1)]
        bins = [{"label": f"{e:g}", "low": e, "high": e, "count": 0} for e in edges]
        for score in scores:
            bins[min(int(math.floor(score + 1e-9)), len(bins) - 1)]["count"] += 1
        return bins
    width = max_score / 10
    bins = [{"label": f"{i * width:g}–{(i + 1) * width:g}", "low": i * width, "high": (i + 1) * width, "count": 0}
            for i in range(10)]
    for score in scores:
        bins[min(int(score / width), 9)]["count"] += 1
    return bins


def histogram_text(bins: Sequence[dict[str, Any]]) -> str:
    """The histogram in words, every bar's count included (its text alternative)."""
    def bar(bin: dict[str, Any]) -> str:
        unit = "point" if bin["label"] == "1" else "points"
        return f"{bin['label']} {unit}: {bin['count']} student{'' if bin['count'] == 1 else 's'}"
    return "Number of students per score: " + "; ".join(bar(b) for b in bins) + "." if bins else ""


def wrong_layouts(results: Sequence[dict[str, Any]], checks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """For each check that compared layouts, in the exercise's order: the layout the task asks
    for, and every distinct layout the failing students' code produced instead, most common
    first (ties by their data, for a deterministic order), with how many and who."""
    found: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for result in results:
        for check in result["report"]["checks"]:
            observed = check.get("observed_layout")
            if check["status"] == "failed" and observed:
                key = json.dumps(observed, sort_keys=True)
                group = found[check["id"]].setdefault(
                    key, {"layout": observed, "expected": check.get("expected_layout"), "students": []})
                group["students"].append(result["student"])
    rows = []
    for check in checks:
        groups = sorted(found[check["id"]].items(), key=lambda item: (-len(item[1]["students"]), item[0])) \
            if check["id"] in found else []
        if groups:
            rows.append({"check": check["id"], "title": check["title"], "expected": groups[0][1]["expected"],
                         "layouts": [{"layout": g["layout"], "count": len(g["students"]),
                                      "students": g["students"][:MAX_NAMES],
                                      "more": max(len(g["students"]) - MAX_NAMES, 0)} for _, g in groups]})
    return rows


def summarize(results: Iterable[dict[str, Any]], problems: Iterable[Problem], *, exercise: dict[str, Any],
              checks: Sequence[dict[str, Any]], names: Mapping[str, str] | None = None,
              notes: Sequence[str] = (), throughput: dict[str, Any] | None = None,
              similar: Sequence[SimilarPair] = ()) -> dict[str, Any]:
    """Plain data for the summary templates. ``results``: ``jaxgrade.result/1`` records;
    ``exercise``: slug, title, version (exercise.toml's), fingerprint (its files'), max_score, seed;
    ``checks``: id, title, category, max_score;
    ``names``: the LMS's name for a student key (shown as "name (key)"); ``notes``: what the
    intake left aside on purpose; ``throughput``: how fast this run graded
    (``grader.batch.throughput.Throughput.as_data``; None: it graded nothing); ``similar``: pairs
    whose code is near-identical (grader.batch.similarity), listed for review, never graded."""
    names = names or {}

    def label(student: str) -> str:
        return f"{names[student]} ({student})" if names.get(student) else student

    results = [{**r, "student": label(r["student"])} for r in sorted(results, key=lambda r: r["student"])]
    problems = list(problems)
    reports = [r["report"] for r in results]
    scores = [float(rep["score"]) for rep in reports]
    max_score = float(exercise["max_score"])
    statuses = Counter(rep["status"] for rep in reports)

    per_check: dict[str, Counter[str]] = {c["id"]: Counter() for c in checks}
    failures: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    trouble = []
    for result, report in zip(results, reports):
        for check in report["checks"]:
            per_check.setdefault(check["id"], Counter())[check["status"]] += 1
            if check["status"] in ("failed", "error"):
                failures[(check["id"], failure_pattern(check["message"]))].append((result["student"], check["message"]))
            if check["status"] == "failed" and check.get("category") == "limits":
                trouble.append({"student": result["student"], "kind": "limit", "message": check["message"]})
            elif check["status"] == "error":
                trouble.append({"student": result["student"], "kind": "grader error", "message": check["message"]})
        if report["status"] == "error" and not any(t["student"] == result["student"] for t in trouble):
            trouble.append({"student": result["student"], "kind": "not gradable",
                            "message": "no check could be graded"})

    titles = {c["id"]: c for c in checks}
    check_rows = []
    for check in checks:
        counts = per_check[check["id"]]
        graded = sum(counts.values())
        check_rows.append({"id": check["id"], "title": check["title"], "category": check.get("category", ""),
                           "passed": counts["passed"], "failed": counts["failed"], "skipped": counts["skipped"],
                           "error": counts["error"], "total": graded,
                           "pass_rate": counts["passed"] / graded if graded else None})

    common = sorted(failures.items(), key=lambda item: (-len(item[1]), item[0]))[:TOP_FAILURES]
    failure_rows = [{"check": check_id, "title": titles.get(check_id, {}).get("title", check_id), "pattern": pattern,
                     "count": len(hits), "example": hits[0][1], "students": [s for s, _ in hits[:MAX_NAMES]],
                     "more": max(len(hits) - MAX_NAMES, 0)}
                    for (check_id, pattern), hits in common]

    slowest = sorted(results, key=lambda r: -float(r["report"].get("duration_s") or 0))[:TOP_SLOWEST]
    by_sha: dict[str, list[str]] = defaultdict(list)
    for result in results:
        sha = result["report"]["submission"].get("sha256")
        if sha:
            by_sha[sha].append(result["student"])

    ungraded_students = {label(p.student) for p in problems if p.student} - {r["student"] for r in results}
    histogram = _histogram(scores, max_score)
    return {
        "exercise": exercise,
        "generated_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "counts": {"students": len(results) + len(ungraded_students), "graded": len(results),
                   "not_graded": len(ungraded_students), "full_marks": statuses["passed"],
                   "failed": statuses["failed"], "error": statuses["error"]},
        "scores": {"mean": statistics.fmean(scores) if scores else None,
                   "median": statistics.median(scores) if scores else None,
                   "min": min(scores) if scores else None, "max": max(scores) if scores else None,
                   "max_score": max_score},
        "histogram": histogram,
        "histogram_text": histogram_text(histogram),
        "checks": check_rows,
        "failures": failure_rows,
        "layouts": wrong_layouts(results, checks),
        "slowest": [{"student": r["student"], "duration_s": float(r["report"].get("duration_s") or 0),
                     "score": r["report"]["score"], "status": r["report"]["status"]} for r in slowest],
        "trouble": trouble,
        "identical": [sorted(names) for names in by_sha.values() if len(names) > 1],
        "similar": [{**pair.as_data(), "students": [label(student) for student in pair.students]}
                    for pair in similar[:MAX_SIMILAR]],
        "similar_more": max(len(similar) - MAX_SIMILAR, 0),
        "similar_tokens": SHINGLE,
        "problems": [{"source": p.source, "student": label(p.student) if p.student else None, "reason": p.reason,
                      "message": p.message} for p in problems],
        "notes": list(notes),
        "throughput": throughput,
        "throughput_text": describe(throughput),
    }


def _printable(value: Any) -> Any:
    """Every printed string loses its control characters (newlines kept: messages have them).
    Markup (what a macro of the templates lays out) is already made of values printed so."""
    return for_html(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def _environment(templates: Path) -> Environment:
    env = Environment(loader=FileSystemLoader(str(templates)), undefined=StrictUndefined, trim_blocks=True,
                      lstrip_blocks=True, keep_trailing_newline=True, finalize=_printable,
                      autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default=False))
    env.filters["points"] = lambda v: "–" if v is None else f"{v:g}"
    env.filters["percent"] = lambda v: "–" if v is None else f"{100 * v:.0f}%"
    env.filters["md"] = lambda v: for_markdown(str(v))
    env.filters["layout_grid"] = titled_grid  # a layout's data drawn (grader.report.layout_picture)
    env.filters["grid_text"] = grid_text
    env.filters["codeblock"] = codeblock
    return env


def render_summary(data: dict[str, Any], format: str, templates: Path | None = None) -> str:
    """``format``: ``html`` or ``md``."""
    if format not in ("html", "md"):
        raise ValueError(f"unknown summary format {format!r}; choose html or md")
    return _environment(templates or templates_root()).get_template(f"summary.{format}.j2").render(s=data)


def write_summary(directory: Path, data: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``summary.html`` and ``summary.md`` into ``directory``; returns their paths."""
    html, md = directory / "summary.html", directory / "summary.md"
    write_atomically(html, render_summary(data, "html"))
    write_atomically(md, render_summary(data, "md"))
    return html, md
