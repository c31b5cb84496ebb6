"""What a student starts from: the exercise's starter file as it is (``jaxgrade start SLUG``), or
a notebook of it (``--notebook``, and the student's folder of ``jaxgrade export student``): the
statement as a Markdown cell, the starter code as a code cell, and a cell that checks the saved
notebook with the command that grades it. The library has no ``grader.check()`` for a kernel
yet, so the check cell runs the command (a shell line, which grading turns into a comment)."""
from __future__ import annotations

import ast

import nbformat

from grader.authoring.exercise import Exercise

SAVE_FIRST = ("**Check your work.** Save the notebook first (Ctrl+S or File → Save): the check grades the "
              "saved file, not what your kernel holds, in a fresh process of its own.")


def starter_text(exercise: Exercise, name: str) -> str:
    """The starter file, its docstring telling the student to check ``name``."""
    return exercise.starter.read_text().replace("THIS_FILE.py", name)


def _code_of(starter: str) -> str:
    """The starter's code without its module docstring (the statement cell says the task)."""
    body = ast.parse(starter).body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        starter = "\n".join(starter.splitlines()[body[0].end_lineno:])
    return starter.strip("\n")


def check_command(exercise: Exercise, name: str) -> str:
    """The check cell's command for a notebook saved as ``name``: jaxgrade's."""
    return f"!jaxgrade check {name} -e {exercise.slug}"


def starter_notebook(exercise: Exercise, name: str, check: str | None = None) -> nbformat.NotebookNode:
    """The starter notebook to be saved as ``name``; ``check`` replaces the check cell's command
    (the student's folder checks with its own script)."""
    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    book.metadata["language_info"] = {"name": "python"}
    book.cells = [nbformat.v4.new_markdown_cell(exercise.statement.strip("\n")),
                  nbformat.v4.new_code_cell(_code_of(starter_text(exercise, name))),
                  nbformat.v4.new_markdown_cell(SAVE_FIRST),
                  nbformat.v4.new_code_cell(check or check_command(exercise, name))]
    nbformat.validate(book)
    return book


def write_notebook(book: nbformat.NotebookNode, path: object) -> None:
    nbformat.write(book, str(path), version=4)
