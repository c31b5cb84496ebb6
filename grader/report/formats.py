"""The report formats ``jaxgrade check --format`` offers (grader.report.render renders them):
named apart so that the command line knows them without importing Jinja2 before its child is
spawned (docs/performance.md)."""
from __future__ import annotations

FORMATS = ("text", "json", "md", "html", "gradescope", "junit", "gitlab", "github", "classroom", "prairielearn")
