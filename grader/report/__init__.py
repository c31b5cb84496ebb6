"""Stage 4: the result of grading one submission (``result``) and how it is laid out for each
audience and platform (``visibility``, ``render``). Renderers never decide a grade."""
from grader.report.result import SCHEMA, CheckResult, Report

__all__ = ["SCHEMA", "CheckResult", "Report"]
