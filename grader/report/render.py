"""Turn a Report into what people and platforms read. Renderers lay out; they never decide a grade.

Every format except ``json`` is a Jinja2 template in ``templates/`` (an instructor overrides one
by putting a file of the same name in ``--templates DIR``), fed by :func:`grader.report.visibility.view`,
which has already removed what the audience may not see and escaped every string (control and
bidi characters shown as ``\\x1b``, ``\\u202e``): every format lays out that view, never the
report's raw text. ``json`` is the jaxgrade.report/1 record, the same for every audience;
``gradescope`` maps each check's visibility onto Gradescope's own, and Gradescope does the
hiding; ``prairielearn`` is PrairieLearn's external grader results.json, laid out from the
audience's view. See docs/formats.md.
"""
from __future__ import annotations

import codecs
import functools
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any, Mapping, TextIO

from jinja2 import Environment, FileSystemLoader, StrictUndefined, meta, select_autoescape
from markupsafe import Markup

from grader.paths import data_folder
from grader.report.classroom import classroom_result, step_output
from grader.report.shape import Graded
from grader.release import STAGES
from grader.report.formats import FORMATS
from grader.report.layout_picture import WIDTH, check_layouts, grids, pair_text
from grader.report.visibility import AUDIENCES, view

COLOURS = {"passed": "32", "failed": "31", "error": "35", "skipped": "90", "pending": "33", "bold": "1", "dim": "2"}
# gitlab is JUnit with what GitLab reads beyond the Jenkins xUnit schema (the template's `flavour`).
TEMPLATES = {"text": "report.txt.j2", "md": "report.md.j2", "html": "report.html.j2", "junit": "report.junit.xml.j2",
             "gitlab": "report.junit.xml.j2"}
MARKUP = {"html": "html", "junit": "xml", "gitlab": "xml"}  # templates whose every value is escaped

# Markdown punctuation that could format, link, mention or open HTML in student-influenced text.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&@#])")
# Lines the GitHub runner would read as a workflow command (``::cmd::`` and the legacy ``##[cmd]``).
_WORKFLOW_COMMAND = re.compile(r"^(\s*)(::|##\[)")
# What GitLab's JUnit parser and Jenkins' junit-attachments plugin read from <system-out> as a file to
# attach ("[[ATTACHMENT|path]]"): a program could print it to attach another artifact of the job.
_ATTACHMENT_TAG = re.compile(r"\[(?=\[\s*ATTACHMENT)", re.IGNORECASE)


def templates_root() -> Path:
    return data_folder("templates")


def _points(value: float) -> str:
    return f"{value:g}"


def _md(text: object) -> str:
    """Markdown-escape text so it shows as written: no emphasis, links, HTML or @mentions."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", "  \n")


def _code(text: object) -> str:
    """An inline Markdown code span that holds any text (a fence longer than its longest backtick run)."""
    text = " ".join(str(text).splitlines())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def codeblock(text: object, info: str = "") -> str:
    """A fenced Markdown code block that its content cannot close early."""
    text = str(text).rstrip("\n")
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _no_attachments(text: object) -> str:
    """Program output for <system-out> with every attachment tag broken by a zero-width space."""
    return _ATTACHMENT_TAG.sub("[\u200b", str(text))


def _indent_all(text: object, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in str(text).splitlines())


@functools.lru_cache(maxsize=32)
def _environment(colour: bool, extra: Path | None, markup: str | None = None) -> Environment:
    """``markup`` is ``html`` or ``xml`` for templates whose every value must be escaped.
    Cached: building an environment costs more than rendering a report (a batch renders
    three per student); Jinja still reloads a template whose file changed."""
    if extra is not None and not Path(extra).is_dir():
        raise ValueError(f"templates folder {extra} does not exist; pass a folder holding your *.j2 overrides")
    search = [str(extra)] if extra else []
    env = Environment(loader=FileSystemLoader([*search, str(templates_root())]), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                      autoescape=select_autoescape(enabled_extensions=()) if markup is None else True)

    def paint(text: str, style: str) -> str:
        return Markup(f"\033[{COLOURS[style]}m{text}\033[0m") if colour and style in COLOURS else text

    env.filters.update(paint=paint, indent_all=_indent_all, points=_points, md=_md, code=_code,
                       codeblock=codeblock, no_attachments=_no_attachments, seconds=lambda v: f"{v:.3f}",
                       layouts_text=lambda c, unicode=True, width=WIDTH: pair_text(*check_layouts(c), unicode, width),
                       layout_grids=lambda c: grids(*check_layouts(c)))
    return env


def render(report: Graded, format: str = "text", *, colour: bool = False, templates: Path | None = None,
           audience: str = "student", stage: str = "open", unicode: bool = True) -> str:
    """Lay ``report`` out as ``format`` (one of :data:`FORMATS`) for ``audience`` (``student`` or
    ``instructor``) at the exercise's release ``stage`` (``open``, ``due`` or ``published``).

    ``templates`` is a folder whose ``*.j2`` files replace the built-in ones of the same name.
    ``github`` returns what goes to stdout (annotations and the fenced text report); the
    Markdown for the step summary comes from :func:`deliver`. ``unicode``: False where the output
    cannot show box-drawing characters (the text report's layouts are then drawn in ASCII)."""
    if audience not in AUDIENCES:
        raise ValueError(f"unknown audience {audience!r}; choose one of {', '.join(AUDIENCES)}")
    if stage not in STAGES:
        raise ValueError(f"unknown release stage {stage!r}; choose one of {', '.join(STAGES)}")
    if format == "json":
        return json.dumps(report.to_dict(), indent=2) + "\n"
    if format == "gradescope":
        return json.dumps(gradescope(report, templates=templates), indent=2) + "\n"
    if format == "prairielearn":
        return json.dumps(prairielearn(report, templates=templates, audience=audience, stage=stage), indent=2) + "\n"
    if format in ("github", "classroom"):  # classroom: github's log; deliver() adds Classroom's result
        return _github(report, templates, audience, stage)
    if format in TEMPLATES:
        env = _environment(colour and format == "text", templates, MARKUP.get(format))
        return env.get_template(TEMPLATES[format]).render(report=view(report, audience, stage), flavour=format,
                                                          unicode=unicode)
    raise ValueError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")


def preload(formats: tuple[str, ...]) -> None:
    """Compile the built-in templates of ``formats`` now, with every template they include or
    import (Jinja loads those only when a render reaches them): processes forked afterwards (a
    class run's grading processes) share them rather than each compiling its own on its first
    report."""
    for format in formats:
        if format in TEMPLATES:
            _compile_with_parts(_environment(False, None, MARKUP.get(format)), TEMPLATES[format])


def _compile_with_parts(env: Environment, name: str) -> None:
    source = env.loader.get_source(env, name)[0] if env.loader else ""
    env.get_template(name)
    for part in meta.find_referenced_templates(env.parse(source)):
        if part is not None:  # a name computed at render time: nothing to compile ahead
            _compile_with_parts(env, part)


def html_fragment(report: Graded, *, templates: Path | None = None, audience: str = "student",
                  stage: str = "open") -> str:
    """The HTML report as a fragment for a notebook's output: the page's content in a box that
    sets its own colours and scopes its CSS (``report.fragment.html.j2``); its ids are unique on
    the page, which may show many reports."""
    env = _environment(False, templates, "html")
    return env.get_template("report.fragment.html.j2").render(report=view(report, audience, stage),
                                                              ids=f"jaxgrade-{secrets.token_hex(4)}-")


def explained(report: Graded, *, audience: str = "student", stage: str = "open") -> dict[str, Any]:
    """The audience's view of ``report`` (``view``) with each shown check's explanation as its
    ``text``: the message, then what the text report says under it (check.txt.j2: expected,
    observed, smallest failing input, hint, how to reproduce), as a runner that shows one check
    at a time prints it (the pytest plugin's failure text)."""
    detail = _environment(False, None).get_template("check.txt.j2")
    shown = view(report, audience, stage)
    for check in shown["checks"]:
        check["text"] = f"{check['message']}\n{detail.render(c=check)}".strip()  # view() made it safe to show
    return shown


def gradescope(report: Graded, *, templates: Path | None = None) -> dict[str, Any]:
    """The results.json Gradescope reads (field list in docs/formats.md).

    Every check becomes a test whose visibility is the check's own, so Gradescope shows it when
    the check's release comes; each test's output is the instructor's full detail, which
    Gradescope hides with the test. The top-level ``output`` is shown to students at once, so
    it is the student view at stage ``open``. ``score`` is the instructor's (hidden checks count)."""
    env = _environment(False, templates)
    detail = env.get_template("check.md.j2")
    summary = env.get_template("gradescope_output.md.j2")
    instructor = view(report, "instructor")
    tests = []
    for number, check in enumerate(instructor["checks"], start=1):
        tests.append({
            "score": check["score"], "max_score": check["max_score"],
            "status": "passed" if check["status"] == "passed" else "failed",
            "name": check["title"], "name_format": "text", "number": str(number),
            "output": detail.render(c=check).strip(), "output_format": "md",
            "tags": [check["category"]], "visibility": check["visibility"],
            "extra_data": {"id": check["id"], "status": check["status"]},
        })
    return {"score": report.score, "execution_time": round(report.duration_s, 3),
            "output": summary.render(report=view(report, "student", "open")).strip(), "output_format": "md",
            "test_output_format": "md", "test_name_format": "text", "visibility": "visible",
            "stdout_visibility": "hidden",
            "extra_data": {"exercise": report.exercise, "status": report.status,
                           "submission": instructor["submission"], "environment": instructor["environment"]},
            "tests": tests}


# Why a --format classroom run reports no points (a grader fault: see grader.report.classroom).
CLASSROOM_FAULT = ("jaxgrade could not grade this submission: the grader failed, not your code (the report above "
                   "says why). No result goes to GitHub Classroom, so it records no points for this run. Push again "
                   "to regrade, and tell your course staff if it keeps happening.")


# Why a submission is not gradable on PrairieLearn when the grader failed (shown to the student).
GRADER_FAULT = ("jaxgrade could not grade this submission: the grader failed, not your code ({why}). PrairieLearn "
                "does not count it as an attempt. Submit again later, and tell your course staff if it keeps happening.")


def prairielearn(report: Graded, *, templates: Path | None = None, audience: str = "student",
                 stage: str = "open") -> dict[str, Any]:
    """The results.json PrairieLearn reads from an external grader (docs/formats.md).

    ``score`` is the report's score over its maximum: every check counts, withheld ones too, as
    PrairieLearn records and shows one score. ``tests`` are the checks the audience may see; the
    withheld ones are one 0/0 entry that says how many there are and what they are worth. Not
    ``gradable`` (PrairieLearn then counts no attempt): a grader fault (a check in status
    ``error``) and a submission that did not load (its ``load`` check failed), like a syntax error."""
    env = _environment(False, templates)
    shown = view(report, audience, stage)
    data: dict[str, Any] = {
        "gradable": True,
        "score": min(1.0, max(0.0, round(report.score / report.max_score, 6))) if report.max_score else 0.0,
        "message": env.get_template("prairielearn_message.txt.j2").render(report=shown).strip(),
        "output": env.get_template("prairielearn_output.txt.j2").render(report=shown).strip(),
        "tests": _prairielearn_tests(shown, env),
    }
    every = view(report, "instructor")["checks"]  # a fault in a withheld check too, its text escaped
    errors = [c for c in every if c["status"] == "error"]
    unloaded = [c for c in every if c["category"] == "load" and c["status"] == "failed"]
    if errors or report.status == "error":
        why = errors[0]["message"] if errors else "nothing could be graded"
        data.update(gradable=False, format_errors=[GRADER_FAULT.format(why=why)])
    elif unloaded:
        data.update(gradable=False, format_errors=[c["message"] + (f" Hint: {c['hint']}" if c["hint"] else "")
                                                   for c in unloaded])
    if not data["gradable"]:
        del data["score"]  # PrairieLearn ignores it then; leaving it out says so
    return data


def _prairielearn_tests(shown: dict[str, Any], env: Environment) -> list[dict[str, Any]]:
    detail = env.get_template("check.txt.j2")
    tests = []
    for check in shown["checks"]:
        label = "" if check["visibility"] == "visible" else f" · {check['visibility'].replace('_', ' ')}"
        tests.append({"name": check["title"], "description": f"{check['id']} · {check['category']}{label}",
                      "points": check["score"], "max_points": check["max_score"],
                      "message": check["message"], "output": detail.render(c=check).strip()})
    withheld = shown["withheld"]
    if withheld["count"]:
        plural = "s" if withheld["count"] != 1 else ""
        tests.append({"name": f"{withheld['count']} hidden check{plural}", "description": "graded, not shown",
                      "points": 0, "max_points": 0,
                      "message": f"{withheld['count']} hidden check{plural} worth {_points(withheld['max_score'])} "
                                 f"point{'s' if withheld['max_score'] != 1 else ''} "
                                 "count in your score; their results are not shown.",
                      "output": ""})
    return tests


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def neutralise_workflow_commands(text: str) -> str:
    """Prefix every line the runner would take for a workflow command, so it is shown, not run."""
    return "\n".join(_WORKFLOW_COMMAND.sub(r"\1» \2", line) for line in text.split("\n"))


def _line_named(text: str, path: str) -> int:
    """The line of the submission ``text`` names (a traceback's ``file.py, line 12``, a syntax
    error's ``at line 3``), else 1: GitHub shows an annotation beside the line it carries."""
    name = re.escape(os.path.basename(path)) if path else r"[^\s,]+\.(?:py|ipynb)"
    found = re.search(rf"{name}\"?, line (\d+)", text) or re.search(r"\bat line (\d+)", text)
    return int(found.group(1)) if found else 1


def _github(report: Graded, templates: Path | None, audience: str, stage: str) -> str:
    """Annotations for the failed checks the audience may see, each on the line of the submission
    its message names (else the first), then the text report inside a stop-commands fence with
    a fresh random token (and workflow-command lines neutralised too)."""
    data = view(report, audience, stage)
    path = str(data['submission'].get('path') or '')
    where = f"file={_escape_property(path)},"
    lines = []
    level = "notice" if data["status"] in ("passed", "pending") else "error"
    lines.append(f"::{level} title={_escape_property('jaxgrade: ' + data['title'])}::"
                 + _escape_data(f"Score {_points(data['score'])}/{_points(data['max_score'])} · {data['verdict']}"))
    for check in data["checks"]:
        if check["status"] in ("failed", "error"):
            message = check["message"] + (f"\nHint: {check['hint']}" if check["hint"] else "")
            line = _line_named("\n".join(filter(None, (check["message"], check["observed"]))), path)
            lines.append(f"::error {where}line={line},title={_escape_property(check['title'])}::"
                         + _escape_data(message))
    token = secrets.token_hex(16)
    text = render(report, "text", templates=templates, audience=audience, stage=stage)
    lines += [f"::stop-commands::{token}", neutralise_workflow_commands(text.rstrip("\n")), f"::{token}::"]
    return "\n".join(lines) + "\n"


def deliver(report: Graded, format: str, stream: TextIO, *, colour: bool = False, templates: Path | None = None,
            audience: str = "student", stage: str = "open", environ: Mapping[str, str] = os.environ) -> None:
    """Write the report to ``stream``; for ``github`` and ``classroom`` also append the Markdown
    report to the file named by ``$GITHUB_STEP_SUMMARY`` when it is set (as it is inside GitHub
    Actions), and for ``classroom`` the step's ``result`` output, which GitHub Classroom's
    reporter reads (:mod:`grader.report.classroom`), to the file named by ``$GITHUB_OUTPUT``."""
    stream.write(render(report, format, colour=colour, templates=templates, audience=audience, stage=stage,
                        unicode=speaks_utf8(stream)))
    if format not in ("github", "classroom"):
        return
    summary, outputs = environ.get("GITHUB_STEP_SUMMARY"), environ.get("GITHUB_OUTPUT")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(render(report, "md", templates=templates, audience=audience, stage=stage))
    if format == "classroom":
        result = classroom_result(report, audience=audience, stage=stage)
        if result is None:
            title = _escape_property("jaxgrade: grader fault")
            stream.write(f"::error title={title}::{_escape_data(CLASSROOM_FAULT)}\n")
        elif outputs:
            with open(outputs, "a", encoding="utf-8") as handle:
                handle.write(step_output(result))
        else:
            stream.write("jaxgrade: GITHUB_OUTPUT is not set (not in GitHub Actions): no result for GitHub "
                         "Classroom was written.\n")


def score_line(report: Graded, *, audience: str = "student", stage: str = "open") -> str:
    """One line for a CI log, the audience's score and verdict: ``jaxgrade: score 7/10 (70%) ·
    some checks failed``. GitLab reads the percentage with the job's ``coverage`` regex
    (docs/formats.md)."""
    shown = view(report, audience, stage)
    percent = 100 * shown["score"] / shown["max_score"] if shown["max_score"] else 0.0
    return (f"jaxgrade: score {_points(shown['score'])}/{_points(shown['max_score'])} ({percent:.1f}%) · "
            f"{shown['verdict']}")


def speaks_utf8(stream: object) -> bool:
    """Whether ``stream`` writes UTF-8 (a file or pipe that names no encoding is taken to)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    return codecs.lookup(encoding).name == "utf-8"


def wants_colour(stream: object) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    return bool(getattr(stream, "isatty", lambda: False)()) and "NO_COLOR" not in os.environ
