"""Everything the grader learns from one submission, gathered through its child process.

A session owns the child, restarts it (and reloads the submission) after the submission
crashes or runs out of time, so that one bad input costs one check, not the whole report.
Every such incident is kept: the ``limits`` check reads them.
"""
from __future__ import annotations

import errno
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from grader.sandbox.protocol import decode_array, encode_array
from grader.errors import ChildFailure, SandboxError
from grader.sandbox.process import Child, Launcher, Limits

# After this many incidents (time-outs, crashes, memory), further calls are not attempted:
# the report already says what went wrong, and each time-out costs the full call limit.
MAX_INCIDENTS = 2


@dataclass(frozen=True)
class Incident:
    kind: str  # "time" | "memory" | "disk" | "crash" | "protocol"
    message: str


@dataclass(frozen=True)
class Returned:
    """What one call gave back, as the child described it."""
    ok: bool
    value: dict[str, Any] | None = None
    error: str | None = None
    exception: str | None = None
    placements: tuple[dict[str, Any], ...] = ()
    incident: Incident | None = None

    def array(self) -> np.ndarray | None:
        """The returned numbers as an array, when the child sent them."""
        payload = (self.value or {}).get("array")
        try:
            return None if payload is None else decode_array(payload)
        except (ValueError, TypeError, KeyError):
            return None

    def number(self) -> float | None:
        """The returned value as one float, when it holds exactly one real number."""
        array = self.array()
        if array is None or array.size != 1 or array.dtype.kind not in "biuf":
            return None
        return float(array.reshape(()))

    def describe(self) -> str:
        """What the function did, as a phrase that follows "your function"."""
        if self.incident and self.incident.kind == "gave_up":
            return f"was not run ({self.incident.message})"
        if self.incident:
            return f"did not return: {self.incident.message}"
        if not self.ok:
            return f"raised {self.error}"
        return f"returned {describe_value(self.value or {})}"


def describe_value(value: dict[str, Any]) -> str:
    kind, type_name = value.get("kind"), value.get("type", "?")
    if kind == "other":
        return f"an object of type {str(type_name)[:200]} ({str(value.get('repr', ''))[:200]})"
    shape = tuple(value.get("shape", ()))
    dtype = value.get("dtype", "?")
    if kind == "python":
        return f"a Python {type_name.split('.')[-1]}"
    what = "a JAX array" if kind == "jax_array" else f"a NumPy value ({type_name})"
    return f"{what} of shape {shape} and dtype {dtype}"


@dataclass
class Loaded:
    ok: bool
    stage: str = ""
    detail: dict[str, Any] = field(default_factory=dict)
    incident: Incident | None = None


class Session:
    def __init__(self, submission: Path, function: str, devices: int, limits: Limits,
                 compile_cache: str | None = None, launcher: Launcher | None = None,
                 hide: tuple[str, ...] = ()) -> None:
        self.launcher = launcher  # how children start: exec'd (None) or forked warm (grader.sandbox.pool)
        self.hide = hide  # more folders the child must not see (a batch: the whole class)
        self.submission, self.function = submission, function
        self.compile_cache = compile_cache
        self.devices, self.limits = devices, limits
        self.incidents: list[Incident] = []
        self.environment: dict[str, Any] = {}
        self.outputs: list[dict[str, Any]] = []
        self._child: Child | None = None
        self._loaded: Loaded | None = None
        self._deadline = time.monotonic() + limits.total_s
        self.cache: dict[str, Any] = {}

    # -- the child's life --------------------------------------------------------------------
    def start(self) -> Child:
        """Launch the child (if none is running) without waiting for it to be ready."""
        if self._child is None:
            self._child = Child(self.devices, self.limits, self.compile_cache, launcher=self.launcher,
                                hide=(str(self.submission.resolve().parent), *self.hide))
        return self._child

    def _ready_child(self) -> Child:
        child = self.start()
        self.environment = {"jax": child.ready.get("jax"), "devices": child.ready.get("devices", []),
                            "protections": child.protections}
        return child

    def _retire(self) -> None:
        if self._child is not None:
            self.outputs.append(self._child.close())
            self._child = None

    def close(self) -> dict[str, Any]:
        """End the child; return the student's output from every child this session ran."""
        self._retire()
        keep = self.limits.output_kib << 10
        head = "".join(o["head"] for o in self.outputs)[:keep]
        tail = "".join(o["tail"] for o in self.outputs)[-keep:]
        total = sum(o["total_bytes"] for o in self.outputs)
        return {"head": head, "tail": tail, "total_bytes": total,
                "dropped_bytes": sum(o["dropped_bytes"] for o in self.outputs)}

    def _request(self, message: dict[str, Any], during: str) -> dict[str, Any]:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise ChildFailure("time", f"the whole grading ran past its limit of {self.limits.total_s:g} s")
        try:
            child = self._ready_child()
            return child.request(message, min(self.limits.call_s, remaining), during)
        except ChildFailure as failure:
            self._retire()
            if failure.kind == "sandbox":  # the grader's fault, never the submission's: an "error" check
                raise SandboxError(failure.message) from None
            if failure.kind == "time":
                failure.message = (f"your code did not finish within {min(self.limits.call_s, remaining):g} s "
                                   f"{during}")
            raise

    def _incident(self, failure: ChildFailure) -> Incident:
        incident = Incident(failure.kind, failure.message)
        self.incidents.append(incident)
        return incident

    # -- requests ------------------------------------------------------------------------------
    def load(self) -> Loaded:
        if self._loaded is not None and (self._child is not None or not self._loaded.ok):
            return self._loaded
        try:
            copy = self._copy_in()
        except OSError as error:
            if error.errno in (errno.ENOSPC, errno.EDQUOT):  # the grader's disk is full: not the student's doing
                self._retire()  # a partial copy stays in that child's folder; a retry starts afresh
                raise SandboxError(f"no room for the submission's copy ({error.strerror})") from None
            self._loaded = Loaded(False, "read", {"error": f"{error.strerror or error}: {self.submission.name}"})
            return self._loaded
        try:
            reply = self._request({"op": "load", "path": str(copy), "display_name": self.submission.name,
                                   "function": self.function}, "while importing your file")
        except ChildFailure as failure:
            self._loaded = Loaded(False, "incident", incident=self._incident(failure))
            return self._loaded
        ok = bool(reply.get("ok")) and bool(reply.get("accepts_one"))
        stage = reply.get("stage", "signature" if reply.get("ok") else "unknown")
        self._loaded = Loaded(ok, "" if ok else stage, reply)
        return self._loaded

    def _copy_in(self) -> Path:
        child = self.start()
        target = Path(child.workdir) / self.submission.name
        # O_EXCL|O_NOFOLLOW: the workdir belongs to the sandbox; never write through a link in it
        with open(self.submission, "rb") as source, \
                open(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644), "wb") as copy:
            shutil.copyfileobj(source, copy)
        return target

    def call(self, x: np.ndarray) -> Returned:
        """Run the function once on ``x``; a crash or time-out becomes an incident."""
        if len(self.incidents) >= MAX_INCIDENTS:
            return Returned(False, incident=Incident("gave_up", f"grading stopped calling it after {MAX_INCIDENTS} "
                                                                "failures"))
        if self._child is None and self._loaded is not None:
            loaded = self.load()
            if not loaded.ok:
                return Returned(False, incident=loaded.incident or Incident("crash", "the file no longer loads"))
        # Incidents name no input: the limits check is shown to students even when the check
        # whose hidden input caused the incident is not (the failing check names its input).
        during = f"while calling {self.function}(x)"
        try:
            reply = self._request({"op": "call", "input": encode_array(x)}, during)
        except ChildFailure as failure:
            return Returned(False, incident=self._incident(failure))
        error, exception = reply.get("error"), reply.get("exception")
        incident = None
        if exception in ("MemoryError", "_ArrayMemoryError") or "RESOURCE_EXHAUSTED" in str(error):
            incident = self._incident(ChildFailure(
                "memory", f"your code ran out of memory (limit {self.limits.memory_mib} MiB) {during}"))
        elif exception == "RecursionError":  # the recursion limit is what guards the stack
            incident = self._incident(ChildFailure("memory", f"your code recursed too deeply ({error}) {during}"))
        elif exception in ("SystemExit", "KeyboardInterrupt"):  # would end the process outside a grader
            what = "called sys.exit()" if exception == "SystemExit" else "raised KeyboardInterrupt"
            incident = self._incident(ChildFailure(
                "crash", f"your code {what} {during}; a function must return its result, not end the program"))
        return Returned(bool(reply.get("ok")), value=reply.get("value"), error=error, exception=exception,
                        placements=tuple(reply.get("placements") or ()), incident=incident)

    def trace(self, x: np.ndarray) -> dict[str, Any]:
        try:
            return self._request({"op": "trace", "input": encode_array(x)},
                                 f"while tracing {self.function}(x) with jax.make_jaxpr")
        except ChildFailure as failure:
            return {"ok": False, "error": self._incident(failure).message}
