"""How an exception raised by the submission's code is shown to the student (runs in the child):
its type and message, and only the frames of the student's own file, with no file of the
grader's or JAX's by its absolute path."""
from __future__ import annotations

import re
import traceback


def error_text(error: BaseException, filename: str) -> str:
    """The exception with only the frames from the student's own file, and no file of the
    grader's or JAX's by its absolute path."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == filename]
    lines = [f"  {filename}, line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in frames[-5:]]
    head = error_head(error)
    return "\n".join([head, *lines]) if lines else head


def error_head(error: BaseException) -> str:
    """``Type: message``, with no file by its absolute path. A failure of JAX's compiler or
    runtime keeps the first line of its diagnostic alone: the rest is a compiler dump (MLIR
    operations, the grader's call sites) that says nothing a student can act on."""
    if type(error).__name__ in ("JaxRuntimeError", "XlaRuntimeError"):
        first = next((line for line in str(error).splitlines() if line.strip()), "")
        head = f"{type(error).__name__}: {re.sub(r'[^ ]*:[0-9]+:[0-9]+: (error: )?', '', first, count=1)}"
    else:
        head = "".join(traceback.format_exception_only(type(error), error)).strip()
    return re.sub(r"(?<![\w.])/(?:[^\s/:'\"()]+/)+([^\s/:'\"()]+)", r"\1", head)  # /abs/path/file.py -> file.py
