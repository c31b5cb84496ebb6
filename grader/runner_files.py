"""The runner's file commands: ``$GITHUB_OUTPUT``, ``$GITHUB_ENV``, ``$GITHUB_PATH`` and
``$GITHUB_STEP_SUMMARY`` name files a GitHub Actions step appends to, which the runner reads when
the step ends: a step's outputs (the points GitHub Classroom records), the environment and PATH of
every later step, the job's summary. A submission that could append to them could forge its
points or run code in later steps. So the sandboxed child is kept from them, and jaxgrade never
writes after content it did not leave there:

- where the child makes a mount namespace, each file and its folder are hidden from it
  (:func:`hidden`, read by ``grader.sandbox.hiding``);
- in every case the grader notes each file's size and SHA-256 before any child starts
  (:meth:`Snapshot.take`) and checks them before it writes its own lines
  (:meth:`Snapshot.verify`): a change means something in the grading wrote there, and the
  grader refuses to report rather than append after it;
- jaxgrade's own multi-line values end with a delimiter nobody can predict (:func:`output_line`),
  so a line written earlier cannot turn jaxgrade's line into the end of a block of its own.

Standard library only: the lowest layer.
"""
from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass
from typing import Mapping

from grader.errors import RunnerFilesChanged

FILE_COMMANDS = ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY")


def paths(environ: Mapping[str, str]) -> dict[str, str]:
    """Each file command's variable that is set, to the file it names."""
    return {name: environ[name] for name in FILE_COMMANDS if environ.get(name)}


def hidden(environ: Mapping[str, str]) -> tuple[str, ...]:
    """What a child must not see: each file and the folder holding it (the runner keeps them all
    in one folder, ``_temp/_runner_file_commands``, which names the next step's files too)."""
    files = [os.path.realpath(path) for path in paths(environ).values()]
    return tuple(dict.fromkeys([*files, *(os.path.dirname(path) for path in files)]))


@dataclass(frozen=True)
class FileState:
    """One file command's file as the grader found it: size -1 where there was none."""
    variable: str
    path: str
    size: int
    sha256: str


def _state(variable: str, path: str) -> FileState:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
            size = handle.tell()
    except FileNotFoundError:
        return FileState(variable, path, -1, "")
    return FileState(variable, path, size, digest.hexdigest())


def _size(state: FileState) -> str:
    return "no file" if state.size < 0 else f"{state.size} bytes"


@dataclass(frozen=True)
class Snapshot:
    """The file commands' files before any child ran."""
    states: tuple[FileState, ...]

    @classmethod
    def take(cls, environ: Mapping[str, str]) -> Snapshot:
        return cls(tuple(_state(name, path) for name, path in paths(environ).items()))

    def verify(self) -> None:
        """Raise :class:`RunnerFilesChanged` when a file is no longer as it was taken."""
        changed = [(before, _state(before.variable, before.path)) for before in self.states]
        changed = [(before, now) for before, now in changed if now != before]
        if changed:
            what = "; ".join(f"${b.variable} ({b.path}: {_size(b)} before, {_size(n)} now)" for b, n in changed)
            raise RunnerFilesChanged(
                f"the runner's file commands changed while the submission was graded: {what}. Something in this "
                "grading wrote there, which only jaxgrade may, so no report, output or summary is written after it "
                "(the runner would read what was written as this step's). Look at the submission; the sandbox "
                "hides these files where the machine allows a mount namespace (docs/threat-model.md).")


def output_line(name: str, value: str) -> str:
    """``name<<DELIMITER``, the value, the delimiter: a step's output as the runner reads it, ended
    by a delimiter drawn now (as GitHub's own toolkit does), which no earlier line can name."""
    delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"
