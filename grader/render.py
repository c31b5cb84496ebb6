"""Turn a Report into text people read. Renderers lay out; they never decide a grade."""
from __future__ import annotations

import json
import os
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from grader.report import Report

PACKAGE = Path(__file__).resolve().parent
COLOURS = {"passed": "32", "failed": "31", "error": "35", "skipped": "90", "bold": "1", "dim": "2"}


def templates_root() -> Path:
    installed = PACKAGE / "templates"
    return installed if installed.is_dir() else PACKAGE.parent / "templates"


def _environment(colour: bool, extra: Path | None) -> Environment:
    search = [str(extra)] if extra else []
    env = Environment(loader=FileSystemLoader([*search, str(templates_root())]), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)

    def paint(text: str, style: str) -> str:
        return f"\033[{COLOURS[style]}m{text}\033[0m" if colour and style in COLOURS else text

    def indent_all(text: str, prefix: str = "    ") -> str:
        return "\n".join(prefix + line if line else line for line in str(text).splitlines())

    env.filters.update(paint=paint, indent_all=indent_all, points=lambda v: f"{v:g}")
    return env


def render(report: Report, format: str = "text", *, colour: bool = False, templates: Path | None = None) -> str:
    """``format`` is ``text`` or ``json``."""
    if format == "json":
        return json.dumps(report.to_dict(), indent=2) + "\n"
    if format == "text":
        template = _environment(colour, templates).get_template("report.txt.j2")
        return template.render(report=report.as_data())
    raise ValueError(f"unknown format {format!r}; choose text or json")


def wants_colour(stream: object) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    return bool(getattr(stream, "isatty", lambda: False)()) and "NO_COLOR" not in os.environ
