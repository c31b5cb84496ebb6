"""Renderers: every format from real gradings, checked by a real consumer where one exists here
(html5lib and headless Chromium for HTML, both revisions of the Jenkins xUnit plugin's junit-10.xsd
and a model of GitLab's parser for JUnit, the
field list for Gradescope, PrairieLearn's documented results format),
golden files for Markdown and text, and the visibility rules in every student-facing format.

Golden files: tests/golden/*.md and *.txt. After a deliberate change to a report, regenerate
them with  JAXGRADE_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_render.py  and review the diff.
"""
from __future__ import annotations

import dataclasses
import difflib
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import html5lib
import pytest

from grader.engine import grade
from grader.authoring.exercise import find_exercise
from grader.report.render import FORMATS, neutralise_workflow_commands, render
from grader.report.result import Report
from grader.release import Release
from grader.report.visibility import view

from browser import AXE, CHROMIUM, NO_AXE, NO_CHROMIUM, audit, chromium, notebook_page

REPO = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
SLUG = "named_sharding_replicated"
VARIANTS = {"reference": "reference.py", "value_skips_first": "wrong/value_skips_first.py",
            "structure_all_devices": "wrong/structure_all_devices.py",
            "load_syntax_error": "wrong/load_syntax_error.py"}
# In the copy with hidden checks: one hidden, one released after the due date.
# Words only the withheld checks' titles, messages, hints and inputs contain.
SECRETS = ("non-finite", "special-casing", "special input", "mesh holds 8", "Replication covers",
           "jax.devices()[:1] with axis", "nan")


def _graded(exercise, relative: str) -> Report:
    """A real grading, made deterministic for golden files: a fixed duration, and no captured
    output (these variants print nothing themselves; what JAX may print, such as cache warnings
    with temporary paths, depends on the machine). Output rendering is tested separately below."""
    path = REPO / "exercises" / SLUG / relative
    report = grade(exercise, path, display_path=f"exercises/{SLUG}/{relative}")
    return dataclasses.replace(report, duration_s=1.25, output={})


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Report:
    """A wrong variant saved under a name that holds a bidi override, printing escape sequences."""
    folder = tmp_path_factory.mktemp("hostile")
    path = folder / "essay\u202egnp.\u202cpy_.py"
    source = (REPO / "exercises" / SLUG / "wrong" / "value_skips_first.py").read_text()
    path.write_text(source + '\nprint("\\x1b[2J\\x1b[31mPASSED 10/10\\x1b[0m \\u202e\\r\\x07")\n')
    return grade(find_exercise(SLUG), path, display_path=path.name)


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    exercise = find_exercise(SLUG)
    return {name: _graded(exercise, relative) for name, relative in VARIANTS.items()}


@pytest.fixture(scope="module")
def hidden(hidden_exercise) -> dict[str, Report]:
    return {name: _graded(hidden_exercise, VARIANTS[name]) for name in ("value_skips_first", "structure_all_devices")}


# --- the report as data (grader.notebook.warm_cells: the service's notebook check sends it to the kernel) ---

def test_a_report_is_rebuilt_from_its_data_as_it_was(reports, hidden):
    output = {"head": "printed\n", "tail": "", "total_bytes": 8, "dropped_bytes": 0}
    for report in [*reports.values(), *hidden.values()]:
        for shown in (report, dataclasses.replace(report, output=output)):
            rebuilt = Report.from_data(json.loads(json.dumps(shown.as_data())))
            assert rebuilt == shown and rebuilt.as_data() == shown.as_data()
            assert str(rebuilt) == str(shown)  # (its HTML names its elements afresh each time)


@pytest.mark.parametrize("change", [
    lambda d: d.pop("title"), lambda d: d.update(extra=1), lambda d: d.update(status="maybe"),
    lambda d: d.update(duration_s="1"), lambda d: d.update(score=d["score"] + 1), lambda d: d.update(checks={}),
    lambda d: d.update(submission=[]), lambda d: d["checks"][0].update(score=True),
    lambda d: d["checks"][0].update(category="other"), lambda d: d["checks"][0].update(visibility="later"),
    lambda d: d["checks"][0].update(hint=3), lambda d: d["checks"][0].pop("message"),
    lambda d: d["checks"].append("check"),
])
def test_data_that_is_no_report_is_refused(reports, change):
    data = json.loads(json.dumps(reports["value_skips_first"].as_data()))
    change(data)
    with pytest.raises(ValueError):
        Report.from_data(data)


# --- golden files --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(VARIANTS))
@pytest.mark.parametrize("format, suffix", [("md", "md"), ("text", "txt")])
def test_golden(reports, name, format, suffix):
    actual = render(reports[name], format)
    golden = GOLDEN / f"{name}.{suffix}"
    if os.environ.get("JAXGRADE_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(actual)
        pytest.skip(f"updated {golden.relative_to(REPO)}: review it with git diff before committing")
    assert golden.is_file(), f"{golden} is missing: create it with JAXGRADE_UPDATE_GOLDEN=1 and review it"
    expected = golden.read_text()
    diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), str(golden), "rendered"))
    assert actual == expected, (f"{format} report of {name} changed. If the change is deliberate, rerun with "
                                f"JAXGRADE_UPDATE_GOLDEN=1 and review the diff:\n{diff}")


def test_golden_reports_say_what_happened(reports):
    """The golden files are only worth keeping if they show the verdicts (so a blind update shows)."""
    assert "Score: 10/10** · all checks passed" in render(reports["reference"], "md")
    skip = render(reports["value_skips_first"], "md")
    assert "Score: 7/10" in skip and "Smallest failing input:** `x = jnp.array([1.0], dtype=jnp.float32)`" in skip
    assert "Your mesh holds 8 devices" in render(reports["structure_all_devices"], "text")
    assert "SyntaxError" in render(reports["load_syntax_error"], "text")


# --- the JSON record keeps its shape --------------------------------------------------------------

def test_json_keeps_the_report1_shape(hidden):
    data = json.loads(render(hidden["value_skips_first"], "json", audience="student"))
    assert list(data) == ["schema", "exercise", "score", "max_score", "status", "checks", "submission",
                          "environment", "duration_s"]
    assert data["schema"] == "jaxgrade.report/1" and data["score"] == 7 and data["max_score"] == 10
    for check in data["checks"]:
        assert list(check) == ["id", "title", "category", "status", "score", "max_score", "message", "hint",
                               "counterexample", "expected", "observed", "advisory", "expected_layout",
                               "observed_layout"]
    # the record holds what the text report shows under a failed check (docs/formats.md: the complete record)
    failed = next(c for c in data["checks"] if c["status"] == "failed" and c["category"] == "value")
    assert (failed["expected"], failed["observed"]) == ("1.0", "0.0 (a JAX array of shape () and dtype float32)")


# --- visibility -----------------------------------------------------------------------------------

def test_engine_carries_visibility_from_exercise_toml(hidden):
    visibility = {c.id: c.visibility for c in hidden["value_skips_first"].checks}
    assert visibility["value.special_inputs"] == "hidden"
    assert visibility["structure.mesh"] == "after_due_date"
    assert visibility["value.random_vectors"] == "visible"
    # and the hidden check really failed: the instructor's score counts it
    special = next(c for c in hidden["value_skips_first"].checks if c.id == "value.special_inputs")
    assert special.status == "failed" and hidden["value_skips_first"].score == 7


@pytest.mark.parametrize("format", ["text", "md", "html", "junit", "github", "prairielearn"])
def test_student_formats_withhold_hidden_checks(hidden, format):
    for name, report in hidden.items():
        out = render(report, format)
        for secret in SECRETS:
            assert secret not in out, f"{format} report of {name} leaks {secret!r}"
        assert "2 hidden checks" in out
        assert "all checks passed" not in out


def test_student_never_reads_all_passed_while_a_hidden_check_fails(hidden):
    """structure_all_devices fails only the delayed mesh check: the student sees 'pending', not 'passed'."""
    student = view(hidden["structure_all_devices"])
    assert student["status"] == "pending" and (student["score"], student["max_score"]) == (8, 8)
    assert student["verdict"] == "all visible checks passed · 2 hidden checks pending"
    text = render(hidden["structure_all_devices"], "text")
    assert "Score on the visible checks: 8/8 · all visible checks passed · 2 hidden checks pending" in text
    assert view(hidden["structure_all_devices"], "instructor")["status"] == "failed"


def test_release_stages_show_delayed_checks(hidden):
    report = hidden["structure_all_devices"]
    due = render(report, "text", stage="due")
    assert "Your mesh holds 8 devices" in due and "(after due date)" in due
    assert "1 hidden check (1 point) pending" in due and "non-finite" not in due
    published = render(report, "md", stage="published")
    assert "Your mesh holds 8 devices" in published and "1 hidden check" in published


def test_release_stage_follows_the_due_date():
    import datetime as dt
    due = dt.datetime(2026, 12, 1, 23, 59, tzinfo=dt.timezone.utc)
    assert Release(due=due).stage(due - dt.timedelta(seconds=1)) == "open"
    assert Release(due=due).stage(due) == "due"
    assert Release(due=due, published=True).stage(due - dt.timedelta(days=9)) == "published"


def test_instructor_sees_everything_labelled(hidden):
    out = render(hidden["value_skips_first"], "md", audience="instructor")
    assert "Score: 7/10" in out and "non\\-finite" not in out and "non-finite" in out
    assert "*(hidden)*" in out and "*(after due date)*" in out and "pending" not in out


def test_student_output_is_withheld_when_hidden_checks_ran_it(hidden):
    report = dataclasses.replace(hidden["value_skips_first"], output=_output("x was [nan, 1.0]\n"))
    for format in ("text", "md", "html"):
        out = render(report, format)
        assert "[nan, 1.0]" not in out and "not shown, because hidden checks ran it" in out
    assert "[nan, 1.0]" in render(report, "md", audience="instructor")


# --- student output cannot escape its box --------------------------------------------------------

def _output(head: str, tail: str = "", dropped: int = 0) -> dict:
    return {"head": head, "tail": tail, "total_bytes": len(head) + len(tail) + dropped, "dropped_bytes": dropped}


HOSTILE = "ok\n```\n# Forged heading\n::error::forged annotation\n  ::set-output name=x::1\n##[error]legacy\n" \
          "<script>alert(1)</script>\x00\x1b[31m @someone ]]>"


def test_markdown_fences_student_output(reports):
    out = render(dataclasses.replace(reports["reference"], output=_output(HOSTILE, "the end", dropped=10)), "md")
    block = re.search(r"\n(`{4,})text\n(.*?)\n\1\n", out, re.DOTALL)
    assert block, "the output is not in a code block longer than the ``` it contains"
    assert "# Forged heading" in block.group(2) and "the end" in block.group(2)
    assert "10 bytes in the middle not shown" in out


def test_control_characters_cannot_redraw_the_terminal(reports):
    """Escape sequences or carriage returns in student output could overwrite the score line."""
    report = dataclasses.replace(reports["value_skips_first"], output=_output("\x1b[2K\rScore: 10/10\r\n\x07x\n"))
    for format in ("text", "md", "github", "junit", "html"):
        out = render(report, format)
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", out), format
        assert "\\x1b[2K" in out, format
    printed = render(report, "text").split("Your program printed 22 bytes:\n")[1]
    assert all(line.startswith("  | ") for line in printed.splitlines())
    coloured = render(report, "text", colour=True)
    assert "\033[31mFAIL" in coloured and "\x1b[2K" not in coloured


# What a CI page or a terminal must never receive raw: C0 and C1 controls (ESC, CSI, CR, BEL)
# and the bidi controls that reorder the text around them (U+061C, U+200E/F, U+202A-202E, U+2066-2069).
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _strings(value: object) -> list[str]:
    """Every string in decoded JSON, keys included."""
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (key, *_strings(item))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("format", [f for f in FORMATS if f != "json"])
def test_a_hostile_file_name_and_output_are_shown_escaped_in_every_format(hostile, format):
    """A real grading of a file whose name holds U+202E and U+202C (the right-to-left override
    and its end) and which prints a terminal escape: every format shows them as \\u202e,
    \\u202c and \\x1b, never raw; JSON formats in every string a platform would show."""
    out = render(hostile, format)
    shown = "\n".join(_strings(json.loads(out))) if format in ("gradescope", "prairielearn") else out
    assert not RAW_CONTROL.search(shown), (format, RAW_CONTROL.search(shown))
    assert "\\x1b[2J" in shown, format  # the program's output, where the format shows it
    if format != "prairielearn":  # PrairieLearn's results name no file
        assert "\\u202egnp" in shown and "\\u202c" in shown, format


def test_the_command_a_report_prints_still_names_the_hostile_file(hostile):
    """The reproduce command is in bash's $'...' quoting, which the escaping leaves as it is."""
    assert hostile.command.startswith("jaxgrade check $'")
    quoted = hostile.command.split(" ")[2]
    named = subprocess.run(["bash", "-c", f"printf %s {quoted}"], capture_output=True, text=True, check=True)
    assert named.stdout == hostile.submission["path"] and quoted in render(hostile, "text")


def test_github_output_cannot_issue_workflow_commands(reports, tmp_path):
    report = dataclasses.replace(reports["value_skips_first"], output=_output(HOSTILE))
    out = render(report, "github")
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("::stop-commands::"))
    token = lines[start].split("::")[2]
    assert re.fullmatch(r"[0-9a-f]{32}", token) and lines[-1] == f"::{token}::"
    assert token not in render(report, "github"), "the token must be fresh on every run"
    for line in lines[start + 1:-1]:
        assert not line.lstrip().startswith(("::", "##[")), line
    annotations = lines[:start]
    assert all(line.startswith(("::error ", "::notice ")) for line in annotations)
    assert sum("title=Sums random vectors correctly (Hypothesis)" in line for line in annotations) == 1
    assert "file=exercises/named_sharding_replicated/wrong/value_skips_first.py" in annotations[1]


def test_neutralise_workflow_commands():
    assert neutralise_workflow_commands("a\n::warning::x\n  ::add-mask::y\n##[group]z\nb::c") == \
        "a\n» ::warning::x\n  » ::add-mask::y\n» ##[group]z\nb::c"


@pytest.mark.slow
def test_github_format_writes_the_step_summary(tmp_path):
    """Through the command, as a workflow runs it: Markdown to $GITHUB_STEP_SUMMARY, annotations on stdout."""
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    done = subprocess.run([sys.executable, "-m", "grader", "check", f"exercises/{SLUG}/wrong/structure_all_devices.py",
                           "--format", "github"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("::error title=jaxgrade%3A NamedSharding (replicated)::Score 9/10")
    assert "::error file=exercises/named_sharding_replicated/wrong/structure_all_devices.py," in done.stdout
    written = summary.read_text()
    assert written.startswith("earlier step\n# jaxgrade · NamedSharding (replicated)\n")
    assert "**Score: 9/10** · some checks failed" in written


@pytest.mark.slow
def test_github_annotations_carry_the_line_a_load_error_included(tmp_path):
    """GitHub shows an annotation beside its line: a load error's is the line that raised, a
    failed check's the line of the submission its message names, else the first."""
    broken = tmp_path / f"{SLUG}.py"
    broken.write_text("import jax\n\nraise RuntimeError('stop here')\n")
    done = subprocess.run([sys.executable, "-m", "grader", "check", str(broken), "-e", SLUG, "--format", "github"],
                          cwd=REPO, env={**os.environ, "CI": "true"}, capture_output=True, text=True, timeout=120)
    load = next(line for line in done.stdout.splitlines() if line.startswith("::error file=") and "loads" in line)
    assert f"file={broken},line=3,title=" in load, load
    failing = tmp_path / "failing" / f"{SLUG}.py"
    failing.parent.mkdir()
    failing.write_text((REPO / "exercises" / SLUG / "wrong" / "structure_all_devices.py").read_text())
    done = subprocess.run([sys.executable, "-m", "grader", "check", str(failing), "-e", SLUG, "--format", "github"],
                          cwd=REPO, env={**os.environ, "CI": "true"}, capture_output=True, text=True, timeout=120)
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error file=")]
    assert annotations and all(re.search(r",line=\d+,title=", line) for line in annotations), annotations


@pytest.mark.slow
def test_exit_code_follows_what_the_audience_sees(hidden_exercise):
    """A student's exit code must not give away a hidden failure; the instructor's does."""
    env = {**os.environ, "JAXGRADE_EXERCISES": str(hidden_exercise.directory.parent)}
    command = [sys.executable, "-m", "grader", "check", f"exercises/{SLUG}/wrong/structure_all_devices.py",
               "-e", SLUG, "--format", "junit"]
    student = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert student.returncode == 0, student.stderr
    assert "Your mesh holds" not in student.stdout and "2 hidden checks pending" in student.stdout
    instructor = subprocess.run([*command, "--audience", "instructor"], cwd=REPO, env=env, capture_output=True,
                                text=True, timeout=120)
    assert instructor.returncode == 1 and "Your mesh holds 8 devices" in instructor.stdout


# --- HTML -----------------------------------------------------------------------------------------

def _html_tree(text: str):
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    return parser.parse(text)  # strict: any HTML5 parse error raises


def _external_references(tree) -> list[str]:
    found = []
    for element in tree.iter():
        for attribute in ("src", "href", "action", "poster", "data", "srcset"):
            if element.get(attribute):
                found.append(f"{element.tag}[{attribute}]={element.get(attribute)}")
        for css in (element.get("style") or "", element.text or "" if element.tag == "style" else ""):
            found += re.findall(r"url\([^)]*\)|@import", css)
    return found


def test_html_is_valid_self_contained_and_accessible(reports):
    report = dataclasses.replace(reports["value_skips_first"], output=_output(HOSTILE, "tail"))
    text = render(report, "html")
    tree = _html_tree(text)
    assert tree.get("lang") == "en"
    assert tree.find(".//meta[@name='viewport']") is not None
    assert tree.find(".//title").text.startswith("Score: 7/10")
    assert _external_references(tree) == []
    assert not tree.findall(".//script") and not tree.findall(".//link") and not tree.findall(".//img")
    headings = [h.tag for h in tree.iter() if re.fullmatch(r"h[1-6]", str(h.tag))]
    assert headings[0] == "h1" and headings.count("h1") == 1 and "h3" in headings
    items = tree.findall(".//ol[@class='checks']/li")
    assert len(items) == 9
    for item, check in zip(items, report.checks):
        badge = "".join(item.find(".//span[@class='badge']").itertext())
        assert check.status.capitalize() in badge  # the status in words, not colour alone
    details = tree.findall(".//details")
    assert any("Your program printed" in "".join(d.find("summary").itertext()) for d in details)
    assert "<script>alert(1)</script>" in "".join(tree.itertext())  # shown as text, never as a tag


def test_html_withholds_and_labels(hidden):
    tree = _html_tree(render(hidden["value_skips_first"], "html"))
    pending = tree.findall(".//ol[@class='checks']/li[@class='pending']")
    assert len(pending) == 1 and "2 hidden checks" in "".join(pending[0].itertext())
    tree = _html_tree(render(hidden["value_skips_first"], "html", audience="instructor"))
    assert "(hidden)" in "".join(tree.itertext())


def _contrast(foreground: str, background: str) -> float:
    def luminance(colour: str) -> float:
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    high, low = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("template, scope", [("report.html.j2", ":root"),
                                             ("report.fragment.html.j2", ".jaxgrade-report")])
def test_html_palettes_meet_wcag_aa_contrast(template, scope):
    """Both palettes (light, and dark for prefers-color-scheme) of the page and of the notebook
    fragment; the fragment's inline style (where a notebook drops <style>) is its light palette."""
    css = (REPO / "templates" / template).read_text()
    palettes = re.findall(re.escape(scope) + r" \{(\s*--[^}]*)\}", css)
    assert len(palettes) == 2
    if scope != ":root":
        inline = re.search(r'style="background: (#[0-9a-f]{6}); color: (#[0-9a-f]{6})', css).groups()
        assert inline == tuple(dict(re.findall(r"--([\w-]+): (#[0-9a-f]{6})", palettes[0]))[k] for k in ("bg", "fg"))
    for palette in palettes:
        colour = dict(re.findall(r"--([\w-]+): (#[0-9a-f]{6})", palette))
        pairs = [("fg", "bg"), ("fg", "card"), ("fg", "code"), ("muted", "bg"), ("muted", "card"),
                 ("fg", "pending-bg")]
        pairs += [(status, f"{status}-bg") for status in ("passed", "failed", "error", "skipped", "pending")]
        for foreground, background in pairs:
            ratio = _contrast(colour[foreground], colour[background])
            assert ratio >= 4.5, f"--{foreground} on --{background}: {ratio:.2f}"


def _page_requests(net_log: Path) -> list[str]:
    """URLs the page asked for. The browser's own service requests carry no initiator
    ('not an origin'); everything a file:// page loads has the page as initiator."""
    log = json.loads(net_log.read_text())
    names = {number: name for name, number in log["constants"]["logEventTypes"].items()}
    urls = []
    for event in log["events"]:
        params = event.get("params") or {}
        if (names.get(event["type"]) == "URL_REQUEST_START_JOB" and "url" in params
                and params.get("initiator") != "not an origin"):
            urls.append(params["url"])
    return [url for url in urls if not url.startswith(("file:", "data:", "about:"))]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_html_in_headless_chromium(reports, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render(dataclasses.replace(reports["value_skips_first"], output=_output("hello\n")), "html"))
    url = page.as_uri()

    # The detector sees a page's requests (otherwise "no request" would prove nothing).
    probe = tmp_path / "probe.html"
    probe.write_text('<!DOCTYPE html><html lang="en"><title>p</title><img alt="" src="http://127.0.0.1:9/p.png">')
    chromium(tmp_path, f"--log-net-log={tmp_path / 'probe.json'}", "--dump-dom", probe.as_uri())
    assert _page_requests(tmp_path / "probe.json") == ["http://127.0.0.1:9/p.png"]

    for name, size in (("desktop", "1000,1600"), ("phone", "390,2600")):
        shot = tmp_path / f"report-{name}.png"
        done = chromium(tmp_path, f"--window-size={size}", f"--screenshot={shot}",
                         f"--log-net-log={tmp_path / f'{name}.json'}", url)
        assert shot.is_file() and shot.stat().st_size > 10_000, done.stderr[-2000:]
        assert _page_requests(tmp_path / f"{name}.json") == []
    dom = chromium(tmp_path, "--dump-dom", url).stdout
    rendered = _html_tree(dom)
    assert "7 / 10" in "".join(rendered.find(".//p[@class='score']").itertext())
    print(f"screenshots: {tmp_path}/report-desktop.png, {tmp_path}/report-phone.png")


LONG_INPUT = "jnp.array([" + ", ".join(["1.0"] * 60) + "])"
LONG_WORD = "x" * 300


def _long_lines(report: Report) -> Report:
    """The report with every failed check's details as long as a message can be: a long input,
    and words no line can hold (a path, an unbroken token)."""
    checks = tuple(dataclasses.replace(c, message=f"{c.message} {LONG_WORD}", expected=LONG_INPUT,
                                       observed=LONG_WORD, counterexample=LONG_INPUT,
                                       hint=f"{c.hint} {LONG_WORD}", reproduce=f"python -c {LONG_WORD}")
                   if c.status == "failed" else c for c in report.checks)
    return dataclasses.replace(report, checks=checks, output=_output(LONG_WORD + "\n" + LONG_INPUT + "\n"))


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
@pytest.mark.skipif(not AXE.is_file(), reason=NO_AXE)
def test_the_audit_sees_what_it_looks_for(tmp_path):
    """The browser audit below is not blind: a page with no <main> and a box wider than a phone
    fails it, at 390 px and not at 1280."""
    page = '<!DOCTYPE html><html lang="en"><title>t</title><body><h1>t</h1><div style="width: 700px">x</div></body></html>'
    phone, desktop = audit(page, 390, tmp_path), audit(page, 1280, tmp_path)
    assert {"landmark-one-main", "region"} <= {v["id"] for v in phone["violations"]}
    assert phone["scroll_width"] > phone["client_width"] == 390
    assert desktop["scroll_width"] == desktop["client_width"] == 1280


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
@pytest.mark.skipif(not AXE.is_file(), reason=NO_AXE)
@pytest.mark.parametrize("width", [390, 1280])
def test_html_report_fits_the_screen_and_axe_finds_nothing(reports, hidden, tmp_path, width):
    """On a phone (390 px) and a desktop (1280 px): no sideways scrolling, whatever a message
    holds, and zero axe-core violations, for the student and the instructor."""
    pages = {"failed, long details": render(_long_lines(reports["value_skips_first"]), "html"),
             "structure": render(reports["structure_all_devices"], "html"),
             "syntax error": render(reports["load_syntax_error"], "html"),
             "hidden, for a student": render(_long_lines(hidden["value_skips_first"]), "html"),
             "hidden, for the instructor": render(_long_lines(hidden["value_skips_first"]), "html",
                                                  audience="instructor")}
    for background, colour in (("#ffffff", "#000000"), ("#111111", "#eeeeee")):  # a light and a dark notebook
        for name, report in (("failed, long details", _long_lines(reports["value_skips_first"])),
                             ("hidden, for a student", _long_lines(hidden["value_skips_first"]))):
            pages[f"notebook on {background}, {name}"] = notebook_page(report._repr_html_() * 2, background, colour)
    for name, page in pages.items():
        found = audit(page, width, tmp_path)
        assert found["violations"] == [], f"{name}: {found['violations']}"
        assert found["scroll_width"] <= found["client_width"] == width, f"{name}: too wide, {found}"



def test_notebook_report_shows_itself_failed_checks_first(reports, hidden):
    """What Jupyter, VS Code and Colab display: the student report as an HTML fragment, Markdown
    and text, failed checks first; the fragment is valid, self-contained, sets its own colours,
    and its ids stay unique when a notebook shows two reports."""
    report = dataclasses.replace(reports["value_skips_first"], output=_output(HOSTILE))
    assert [c.status for c in report.checks][:3] == ["passed", "passed", "failed"]  # the exercise's order
    failed = [c.title for c in report.checks if c.status == "failed"]
    fragment = report._repr_html_()
    tree = _html_tree(notebook_page(fragment + report._repr_html_(), "#111111", "#eeeeee"))
    box = tree.find(".//div[@class='jaxgrade-report']")
    assert "background: #ffffff; color: #1f2328" in box.get("style")
    assert _external_references(tree) == [] and len(tree.findall(".//script")) == 0
    titles = ["".join(li.find(".//span[@class='title']").itertext()).strip()
              for li in box.findall(".//ol[@class='checks']/li")]
    assert titles[:len(failed)] == failed and len(titles) == len(report.checks)
    ids = [e.get("id") for e in tree.iter() if e.get("id")]
    assert len(ids) == 8 and len(set(ids)) == 8
    assert "<script>alert(1)</script>" in "".join(tree.itertext())  # the program's output, as text
    markdown, text = report._repr_markdown_(), str(report)
    assert markdown.index(_md_title(failed[0])) < markdown.index("Returns a float32")
    assert text.index(failed[-1]) < text.index("Returns a float32") and "\x1b[" not in text
    printed = []
    report._repr_pretty_(type("Printer", (), {"text": lambda self, s: printed.append(s)})(), False)
    assert printed == [text.rstrip("\n")]
    for shown in (hidden["value_skips_first"]._repr_html_(), hidden["value_skips_first"]._repr_markdown_(),
                  str(hidden["value_skips_first"])):
        assert "2 hidden checks" in shown and not any(secret in shown for secret in SECRETS)


def _md_title(title: str) -> str:
    return re.sub(r"([\\`*_\[\]<>|~&@#])", r"\\\1", title)


# --- JUnit ----------------------------------------------------------------------------------------

def test_junit_structure(reports):
    report = dataclasses.replace(reports["value_skips_first"], output=_output(HOSTILE))
    root = ET.fromstring(render(report, "junit").encode())
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    for element in (root, suite):
        assert {"tests", "failures", "errors", "time"} <= set(element.attrib)
        assert (element.get("tests"), element.get("failures"), element.get("errors")) == ("9", "2", "0")
        float(element.get("time"))
    assert suite.get("skipped") == "0" and "skipped" not in root.attrib  # junit-10.xsd refuses it there
    cases = suite.findall("testcase")
    assert len(cases) == 9
    for case, check in zip(cases, report.checks):
        assert case.get("classname") == f"{SLUG}.{check.category}"
        assert case.get("name") == f"{check.id}: {check.title}"
        assert float(case.get("time")) >= 0
        failure = case.find("failure")
        if check.status == "failed":
            assert failure.get("message") == check.message and "hint: " in failure.text
        else:
            assert failure is None
    assert "ok" in suite.find("system-out").text


def test_junit_skips_and_pending(reports, hidden):
    syntax = ET.fromstring(render(reports["load_syntax_error"], "junit").encode()).find("testsuite")
    assert syntax.get("skipped") == "8" and len(syntax.findall(".//testcase/skipped")) == 8
    student = ET.fromstring(render(hidden["value_skips_first"], "junit").encode()).find("testsuite")
    assert student.get("tests") == "8" and student.get("skipped") == "1"
    assert student.findall(".//testcase")[-1].get("name") == "2 hidden checks pending"


def _grader_errors(report: Report, every: bool) -> Report:
    """The report the engine makes when the grader fails: every check (the sandbox could not be set
    up: status "error") or one check (a check that raised) in status "error" with no points."""
    message = "The grader failed on this check (RuntimeError: boom). This is not your fault."
    checks = tuple(dataclasses.replace(c, status="error", score=0.0, message=message)
                   if every or c.id == "structure.mesh" else c for c in report.checks)
    return dataclasses.replace(report, checks=checks, status="error" if every else report.status)


# junit-10-current.xsd: what every xUnit release since 2.3.2 validates against; junit-10.xsd: an
# older revision (each file's comment says where it comes from, to the commit).
@pytest.fixture(scope="module", params=["junit-10-current.xsd", "junit-10.xsd"])
def junit_schema(request):
    import xmlschema
    return xmlschema.XMLSchema(str(REPO / "tests" / "data" / request.param))


def test_junit_validates_against_the_jenkins_xunit_schema(reports, hidden, junit_schema):
    """Jenkins' xUnit plugin refuses any report its junit-10.xsd rejects: every kind must pass it."""
    kinds = {
        "passed": reports["reference"],
        "failed": dataclasses.replace(reports["value_skips_first"], output=_output(HOSTILE, "tail", dropped=3)),
        "skipped": reports["load_syntax_error"],
        "one grader error": _grader_errors(reports["reference"], every=False),
        "grader fault": _grader_errors(reports["reference"], every=True),
    }
    documents = {name: render(report, "junit") for name, report in kinds.items()}
    documents["hidden, for a student"] = render(hidden["value_skips_first"], "junit")
    documents["hidden, after the due date"] = render(hidden["structure_all_devices"], "junit", stage="due")
    documents["hidden, for the instructor"] = render(hidden["value_skips_first"], "junit", audience="instructor")
    for name, document in documents.items():
        errors = [str(e.reason) for e in junit_schema.iter_errors(document)]
        assert not errors, f"{name}: {errors}"
    fault = ET.fromstring(documents["grader fault"].encode()).find("testsuite")
    assert fault.get("errors") == "9" and len(fault.findall("testcase/error")) == 9
    assert all("not your fault" in e.text for e in fault.iter("error"))


def test_junit_schema_is_not_a_rubber_stamp(reports, junit_schema):
    """The shipped schemas really reject what Jenkins rejects: the old skipped count on <testsuites>,
    and GitLab's `file` on a testcase (so --format junit never carries it)."""
    document = render(reports["reference"], "junit").replace('<testsuites name="jaxgrade"',
                                                             '<testsuites skipped="0" name="jaxgrade"')
    assert [e for e in junit_schema.iter_errors(document)]
    assert [e for e in junit_schema.iter_errors(render(reports["reference"], "gitlab"))]


def test_the_current_xunit_schema_refuses_what_the_older_revision_accepts(reports):
    """The two revisions differ (the current allows at most three decimals in a suite's time): the
    tests above really check jaxgrade against the revision Jenkins runs today."""
    import xmlschema
    schemas = [xmlschema.XMLSchema(str(REPO / "tests" / "data" / name)) for name in ("junit-10-current.xsd",
                                                                                      "junit-10.xsd")]
    document = re.sub(r'(<testsuite name="[^"]*".*?time=")1\.250"', r'\g<1>1.2500"', render(reports["reference"], "junit"))
    assert "1.2500" in document
    assert [bool(list(schema.iter_errors(document))) for schema in schemas] == [True, False]


# --- GitLab ---------------------------------------------------------------------------------------
# GitLab's JUnit parser (lib/gitlab/ci/parsers/test/junit.rb, gitlab-org/gitlab): the XML becomes a hash
# as ActiveSupport's Hash.from_xml makes it (an element is its text if it has neither attributes nor
# children, else a hash of its attributes and children, dashes in names as underscores, its text under
# "__content__"). Testcases are read only below a <testsuite> (or the one top <testsuites>), each with
# suite_name, classname, name, file and time; its status is failure / error / skipped / success by which
# child it has; only a failed or errored testcase shows output, its own <system-out> ("System Out:"),
# from which "[[ATTACHMENT|path]]" makes an attachment. A <testsuite>'s <system-out> is never read.

GITLAB_ATTACHMENT = re.compile(r"\[\[ATTACHMENT\|(?P<path>[^\[\]\|]+?)\]\]")


def _hash_from_xml(element: ET.Element):
    children = list(element)
    if not element.attrib and not children:
        return element.text or None
    node: dict = dict(element.attrib)
    for child in children:
        key, value = child.tag.replace("-", "_"), _hash_from_xml(child)
        node[key] = [*node[key], value] if isinstance(node.get(key), list) else (
            [node[key], value] if key in node else value)
    if (element.text or "").strip() and children == []:
        node["__content__"] = element.text
    return node


def gitlab_parse(document: str) -> list[dict]:
    """The test cases GitLab shows for a JUnit report, with what it shows of each."""
    root = {ET.fromstring(document.encode()).tag: _hash_from_xml(ET.fromstring(document.encode()))}
    found: list[dict] = []

    def listed(value):
        return [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, dict)]

    def all_cases(node, parent=None):
        for each in listed(node):
            if parent is None:
                all_cases(each.get("testsuites"), node)
            else:
                for case in listed(each.get("testcase")):
                    found.append(create_test_case({**case, "suite_name": each.get("name")}))
            all_cases(each.get("testsuite"), node)

    def create_test_case(data):
        system_out = f"System Out:\n\n{data['system_out']}" if "system_out" in data else None
        attachment = None
        for element, status in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
            if element in data:
                output = data[element]
                if status != "skipped":
                    output = "\n\n".join(str(part) for part in (output, system_out) if part is not None)
                    match = GITLAB_ATTACHMENT.search(data.get("system_out") or "")
                    attachment = match and match.group("path")
                break
        else:
            status, output = "success", None
        return {"suite_name": data["suite_name"], "classname": data.get("classname"), "name": data.get("name"),
                "file": data.get("file"), "time": data.get("time"), "status": status, "output": output,
                "attachment": attachment}

    all_cases(root)
    return found


def test_gitlab_shows_each_check_with_its_file_and_the_program_output_on_failures(reports):
    printed = "hello from the student\n[[ATTACHMENT|/builds/secret/reference.py]]\n"
    report = dataclasses.replace(reports["value_skips_first"], output=_output(printed, "the end", dropped=4))
    cases = gitlab_parse(render(report, "gitlab"))
    assert [(c["name"], c["status"]) for c in cases] == [
        (f"{check.id}: {check.title}", {"passed": "success"}.get(check.status, check.status)) for check in report.checks]
    assert {(c["suite_name"], c["file"]) for c in cases} == {(SLUG, f"exercises/{SLUG}/wrong/value_skips_first.py")}
    assert all(c["classname"].startswith(f"{SLUG}.") and float(c["time"]) >= 0 for c in cases)
    failed = [c for c in cases if c["status"] == "failed"]
    assert len(failed) == 2
    for case in failed:
        assert "hint: " in case["output"] and "System Out:\n\nhello from the student" in case["output"]
        assert "the end" in case["output"] and case["attachment"] is None  # a printed tag attaches nothing
    assert all(c["output"] is None for c in cases if c["status"] == "success")
    # --format junit: the same testcases and output, without `file` (Jenkins' schema refuses it).
    plain = gitlab_parse(render(report, "junit"))
    assert [c["output"] for c in plain] == [c["output"] for c in cases] and {c["file"] for c in plain} == {None}


def test_gitlab_shows_grader_errors_skips_and_withheld_checks_without_leaking_output(reports, hidden):
    errors = gitlab_parse(render(dataclasses.replace(_grader_errors(reports["reference"], every=True),
                                                     output=_output("boom\n")), "gitlab"))
    assert {c["status"] for c in errors} == {"error"}
    assert all("not your fault" in c["output"] and "System Out:\n\nboom" in c["output"] for c in errors)
    skipped = gitlab_parse(render(reports["load_syntax_error"], "gitlab"))
    assert [c["status"] for c in skipped].count("skipped") == 8
    student = dataclasses.replace(hidden["value_skips_first"], output=_output("printed 0.5\n"))
    cases = gitlab_parse(render(student, "gitlab"))
    assert cases[-1]["name"] == "2 hidden checks pending" and cases[-1]["status"] == "skipped"
    assert not any("printed 0.5" in (c["output"] or "") for c in cases)  # output may hold hidden inputs
    assert not any(secret in str(cases) for secret in SECRETS)


# --- Gradescope -----------------------------------------------------------------------------------

TOP = {"score": (int, float), "execution_time": (int, float), "output": str, "output_format": str,
       "test_output_format": str, "test_name_format": str, "visibility": str, "stdout_visibility": str,
       "extra_data": dict, "tests": list}
TEST = {"score": (int, float), "max_score": (int, float), "status": str, "name": str, "name_format": str,
        "number": str, "output": str, "output_format": str, "tags": list, "visibility": str, "extra_data": dict}
GRADESCOPE_VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def _check_gradescope_fields(data: dict) -> None:
    assert set(data) == set(TOP)
    for key, kind in TOP.items():
        assert isinstance(data[key], kind), key
    assert data["output_format"] == "md" and data["visibility"] in GRADESCOPE_VISIBILITY
    for test in data["tests"]:
        assert set(test) == set(TEST)
        for key, kind in TEST.items():
            assert isinstance(test[key], kind), key
        assert test["status"] in ("passed", "failed") and 0 <= test["score"] <= test["max_score"]
        assert test["visibility"] in GRADESCOPE_VISIBILITY and test["output_format"] == "md"


def test_gradescope_results(reports):
    data = json.loads(render(reports["value_skips_first"], "gradescope"))
    _check_gradescope_fields(data)
    assert data["score"] == 7 and data["execution_time"] == 1.25
    assert [t["status"] for t in data["tests"]].count("failed") == 2
    assert [t["number"] for t in data["tests"]] == [str(n) for n in range(1, 10)]
    failed = next(t for t in data["tests"] if t["extra_data"]["id"] == "value.random_vectors")
    assert "**Smallest failing input:** `x = jnp.array([1.0], dtype=jnp.float32)`" in failed["output"]
    skipped = json.loads(render(reports["load_syntax_error"], "gradescope"))
    assert {t["status"] for t in skipped["tests"][1:]} == {"failed"}  # 0/1 skipped is not "passed"


def test_gradescope_maps_visibility(hidden):
    data = json.loads(render(hidden["value_skips_first"], "gradescope"))
    _check_gradescope_fields(data)
    by_id = {t["extra_data"]["id"]: t for t in data["tests"]}
    assert by_id["value.special_inputs"]["visibility"] == "hidden"
    assert by_id["structure.mesh"]["visibility"] == "after_due_date"
    assert data["score"] == 7  # the instructor's score, hidden checks included
    for secret in SECRETS:
        assert secret not in data["output"]  # the top-level output is shown to students at once
    assert "2 hidden checks (2 points) pending" in data["output"]


# --- PrairieLearn ---------------------------------------------------------------------------------

PRAIRIELEARN_SCHEMA = REPO / "tests" / "data" / "prairielearn.schema.json"


def step_outputs(text: str) -> dict[str, str]:
    """The outputs GitHub's runner reads from a step's $GITHUB_OUTPUT file, as actions/runner's
    file commands parse it (src/Runner.Worker/FileCommandManager.cs, EnvFileKeyValuePairs): empty
    lines skipped; a line whose first ``=`` comes before any ``<<`` is ``name=value``; else
    ``name<<DELIMITER`` starts a block whose value is every line up to the next line that is
    exactly DELIMITER (none: the runner fails the step, ValueError here). A later name wins."""
    outputs = {}
    lines = iter(text.split("\n"))
    for line in lines:
        if not line:
            continue
        equals, heredoc = line.find("="), line.find("<<")
        if equals >= 0 and (heredoc < 0 or equals < heredoc):
            outputs[line[:equals]] = line[equals + 1:]
            continue
        if heredoc < 0:
            raise ValueError(f"Invalid format {line!r}")
        name, delimiter, value = line[:heredoc], line[heredoc + 2:], []
        for inner in lines:
            if inner == delimiter:
                break
            value.append(inner)
        else:
            raise ValueError(f"Matching delimiter not found {delimiter!r}")
        outputs[name] = "\n".join(value)
    return outputs


def classroom_reporter_reads(runners: str, environ: dict[str, str]) -> dict:
    """What GitHub Classroom's reporter (classroom-resources/autograding-grading-reporter) makes
    of its runners' results, reproduced from its source: src/main.js reads, for each id of the
    comma-separated ``runners`` input, ``process.env[id.trim().toUpperCase() + "_RESULTS"]``,
    decodes it with ``Buffer.from(value, "base64").toString("utf-8")`` (lenient: characters
    outside the alphabet are skipped, bad UTF-8 becomes U+FFFD) and ``JSON.parse``; it fails the
    run when any result's status is "fail" or "error"; src/notify-classroom.js skips a result
    whose ``max_score`` is falsy, adds up every test's ``score`` and each ``max_score``, and
    posts "Points {total}/{max}" as the annotation Classroom records (none when the maximum is
    0). Returns the points, the messages it would fail the run with, and the decoded results."""
    import base64
    results = []
    for runner in runners.split(","):
        encoded = environ.get(f"{runner.strip().upper()}_RESULTS")
        if encoded is None:  # Buffer.from(undefined) throws: the run fails, nothing is recorded
            return {"points": None, "failed": "The first argument must be of type string", "results": results}
        kept = re.sub(r"[^A-Za-z0-9+/=_-]", "", encoded).replace("-", "+").replace("_", "/")
        text = base64.b64decode(kept + "=" * (-len(kept.rstrip("=")) % 4), validate=False)
        results.append(json.loads(text.decode("utf-8", "replace")))
    total = maximum = 0
    for result in results:
        if not result.get("max_score"):
            continue
        maximum += result["max_score"]
        total += sum(test["score"] for test in result["tests"])
    failed = ("Some tests failed." if any(r["status"] == "fail" for r in results)
              else "Some tests errored." if any(r["status"] == "error" for r in results) else None)
    # src/console-results.js's "Total points for RUNNER: X/Y" (helpers/test-helpers.js getTestScore)
    logged = [sum(t["status"] == "pass" for t in r["tests"]) / len(r["tests"]) * (r.get("max_score") or 0)
              for r in results]
    return {"points": (total, maximum) if maximum else None, "logged": logged, "failed": failed,
            "results": results}


def points_per_check(result: dict) -> dict[str, float]:
    """A classroom result's points for each check id (a check is one test per point)."""
    points: dict[str, float] = {}
    for test in result["tests"]:
        check = test["name"].split(":")[0]
        points[check] = points.get(check, 0) + test["score"]
    return points


def prairielearn_reads(text: str) -> dict:
    """What PrairieLearn makes of a results.json, per its documented contract (the schema in
    tests/data transcribes it): the grader host refuses files over 1 MB and unparsable JSON;
    ``gradable`` absent means true; a gradable result needs a score in [0, 1]; format_errors is a
    string or a list of strings. Returns the grade PrairieLearn would record."""
    import jsonschema
    assert len(text.encode()) <= 1024 * 1024, "PrairieLearn's grader host refuses results over 1 MB"
    results = json.loads(text)
    schema = json.loads(PRAIRIELEARN_SCHEMA.read_text())
    jsonschema.Draft202012Validator({**schema, "$ref": "#/$defs/results"}).validate(results)
    gradable = results.get("gradable", True) is not False
    errors = results.get("format_errors", [])
    return {"gradable": gradable, "score": results["score"] if gradable else None,
            "format_errors": [errors] if isinstance(errors, str) else errors, "results": results}


def test_prairielearn_results_follow_the_documented_format(reports):
    failed = prairielearn_reads(render(dataclasses.replace(reports["value_skips_first"], output=_output(HOSTILE)),
                                       "prairielearn"))
    assert failed["gradable"] and failed["score"] == 0.7
    results = failed["results"]
    assert [t["name"] for t in results["tests"]] == [c.title for c in reports["value_skips_first"].checks]
    # <pl-external-grader-results> shows per-test points only when every test has both numbers
    assert all(isinstance(t["points"], float) and isinstance(t["max_points"], float) for t in results["tests"])
    assert sum(t["points"] for t in results["tests"]) == 7 and sum(t["max_points"] for t in results["tests"]) == 10
    vectors = next(t for t in results["tests"] if t["description"].startswith("value.random_vectors"))
    assert "smallest failing input:  x = jnp.array([1.0], dtype=jnp.float32)" in vectors["output"]
    assert "Score: 7/10" in results["message"] and "# Forged heading" in results["output"]
    # PrairieLearn turns ANSI escapes in output into colours: the student's own are neutralised first
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", results["output"]) and "\\x1b[31m" in results["output"]
    passed = prairielearn_reads(render(reports["reference"], "prairielearn"))
    assert passed["gradable"] and passed["score"] == 1.0


def test_prairielearn_counts_no_attempt_for_load_errors_and_grader_faults(reports):
    """PrairieLearn: "gradable": false for input that could not be processed (a syntax error is
    its example): no points awarded or lost, no attempt counted. A grader fault is not the
    student's doing either."""
    syntax = prairielearn_reads(render(reports["load_syntax_error"], "prairielearn"))
    assert not syntax["gradable"] and "score" not in syntax["results"]
    assert len(syntax["format_errors"]) == 1 and "SyntaxError" in syntax["format_errors"][0]
    for every in (True, False):
        fault = prairielearn_reads(render(_grader_errors(reports["reference"], every=every), "prairielearn"))
        assert not fault["gradable"], every
        assert "the grader failed, not your code" in fault["format_errors"][0]
        assert "does not count it as an attempt" in fault["format_errors"][0]


def test_prairielearn_withholds_hidden_checks_but_counts_them(hidden):
    report = dataclasses.replace(hidden["value_skips_first"], output=_output("x was [nan, 1.0]\n"))
    student = prairielearn_reads(render(report, "prairielearn"))
    text = json.dumps(student["results"])
    for secret in (*SECRETS, "[nan, 1.0]"):
        assert secret not in text, secret
    assert student["score"] == 0.7  # PrairieLearn records one score: the hidden checks count in it
    summary = student["results"]["tests"][-1]
    assert summary["name"] == "2 hidden checks" and (summary["points"], summary["max_points"]) == (0, 0)
    assert "count in your score" in summary["message"] and "2 hidden checks (2 points) are graded" in \
        student["results"]["message"]
    assert len(student["results"]["tests"]) == 8
    due = prairielearn_reads(render(hidden["structure_all_devices"], "prairielearn", stage="due"))["results"]
    assert any("Your mesh holds 8 devices" in t["message"] for t in due["tests"]) and due["tests"][-1]["name"] == \
        "1 hidden check"
    instructor = prairielearn_reads(render(report, "prairielearn", audience="instructor"))["results"]
    assert len(instructor["tests"]) == 9 and "[nan, 1.0]" in instructor["output"]


# --- templates and arguments ----------------------------------------------------------------------

def _deliver_classroom(report: Report, tmp_path: Path, audience: str = "student") -> tuple[str, dict]:
    from io import StringIO
    from grader.report.render import deliver
    tmp_path.mkdir(exist_ok=True)
    outputs, summary, stream = tmp_path / "output", tmp_path / "summary.md", StringIO()
    outputs.write_text(""), summary.write_text("")
    deliver(report, "classroom", stream, audience=audience,
            environ={"GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary)})
    found = step_outputs(outputs.read_text())
    read = classroom_reporter_reads("jaxgrade", {"JAXGRADE_RESULTS": found["result"]} if "result" in found else {})
    assert summary.read_text() == render(report, "md", audience=audience)
    return stream.getvalue(), read


def test_classroom_result_gives_each_check_its_points(reports, tmp_path):
    log, read = _deliver_classroom(reports["value_skips_first"], tmp_path)
    assert read["points"] == (7, 10) and read["failed"] == "Some tests failed."
    assert read["logged"] == [7]  # the reporter's own log line says the points Classroom records
    checks = reports["value_skips_first"].checks
    assert points_per_check(read["results"][0]) == {c.id: c.score for c in checks}
    tests = read["results"][0]["tests"]
    assert len(tests) == 10 and tests[0]["name"] == f"{checks[0].id}: {checks[0].title}"
    first, second = (t for t in tests if t["name"].startswith("value.random_vectors"))  # a 2-point check
    assert first["name"].endswith("(point 1 of 2)") and second["name"].endswith("(point 2 of 2)")
    assert first["status"] == second["status"] == "fail" and "Hint:" in first["message"] and not second["message"]
    assert first["test_code"].startswith("JAX_") and not second["test_code"]
    github = render(reports["value_skips_first"], "github")  # the same log: annotations, then the fenced report
    assert log.split("::stop-commands::")[0] == github.split("::stop-commands::")[0] and "::error " in log
    _, read = _deliver_classroom(reports["reference"], tmp_path / "right")
    assert read["points"] == (10, 10) and read["logged"] == [10] and read["failed"] is None
    halves = dataclasses.replace(reports["value_skips_first"], checks=tuple(
        dataclasses.replace(c, score=c.score / 2, max_score=c.max_score / 2) for c in checks))
    _, read = _deliver_classroom(halves, tmp_path / "halves")  # points that are not whole: a test per check
    assert read["points"] == (3.5, 5) and len(read["results"][0]["tests"]) == len(checks)
    assert points_per_check(read["results"][0]) == {c.id: c.score for c in halves.checks}


def test_classroom_counts_hidden_checks_without_naming_them(hidden, tmp_path):
    _, read = _deliver_classroom(hidden["value_skips_first"], tmp_path)
    assert read["points"] == (7, 10) and read["logged"] == [7]  # every check counts: Classroom records one total
    hidden_tests = [t for t in read["results"][0]["tests"] if t["name"].startswith("2 hidden checks")]
    assert [(t["name"], t["score"]) for t in hidden_tests] == [("2 hidden checks (point 1 of 2)", 1),
                                                              ("2 hidden checks (point 2 of 2)", 0)]
    text = json.dumps(read["results"])
    assert not [s for s in SECRETS if s in text]


def test_classroom_records_nothing_for_a_grader_fault(reports, tmp_path):
    broken = dataclasses.replace(reports["reference"], checks=tuple(
        dataclasses.replace(c, status="error", score=0.0, message="the sandbox could not be set up")
        if c.id.startswith("structure.") else c for c in reports["reference"].checks))
    log, read = _deliver_classroom(broken, tmp_path)
    assert read["points"] is None and read["failed"]  # the reporter fails the run, Classroom records no points
    assert "::error title=jaxgrade%3A grader fault::" in log.splitlines()[-1]


def test_instructor_templates_override_and_still_get_the_view(hidden, tmp_path):
    (tmp_path / "report.txt.j2").write_text(
        "{{ report.exercise }}: {{ report.score | points }}/{{ report.max_score | points }}\n"
        "{% for c in report.checks %}{{ c.id }}\n{% endfor %}withheld={{ report.withheld.count }}\n")
    out = render(hidden["value_skips_first"], "text", templates=tmp_path)
    assert out.startswith(f"{SLUG}: 6/8\n") and "value.special_inputs" not in out and "withheld=2" in out
    # templates it does not override still come from the built-in folder
    assert render(hidden["value_skips_first"], "md", templates=tmp_path).startswith("# jaxgrade")


def test_text_colour_only_when_asked(reports):
    assert "\033[" not in render(reports["value_skips_first"], "text")
    assert "\033[31mFAIL" in render(reports["value_skips_first"], "text", colour=True)
    assert "\033[" not in render(reports["value_skips_first"], "md", colour=True)


def test_unknown_arguments_say_what_to_do(reports):
    with pytest.raises(ValueError, match="choose one of text, json, md, html, gradescope, junit, gitlab, github, "
                                         "classroom, prairielearn"):
        render(reports["reference"], "pdf")
    with pytest.raises(ValueError, match="choose one of student, instructor"):
        render(reports["reference"], "md", audience="teacher")
    with pytest.raises(ValueError, match="does not exist"):
        render(reports["reference"], "md", templates=Path("/no/such/folder"))
    assert set(FORMATS) == {"text", "json", "md", "html", "gradescope", "junit", "gitlab", "github", "classroom",
                            "prairielearn"}
