"""Everything the grader learns from one submission, gathered through its child process.

A session owns the child, restarts it (and reloads the submission) after the submission
crashes or runs out of time, so that one bad input costs one check, not the whole report.
Every such incident is kept: the ``limits`` check reads them.

Time: each request (an import, a call, a trace) has ``limits.call_s``; each check has a
budget of its own (:meth:`Session.budget`, set by the engine), so one slow check cannot starve
the others; ``limits.total_s`` bounds the whole grading. Of an import's time, the notebook
cells the function does not need have ``DEMO_SHARE`` in all (the child interrupts one that
hangs). A time-out message quotes the limit that applied, never what happened to remain of it.

Seeds: validation grades one submission under several seeds in one session. What happened
before a grading drew inputs from its seed (``seeded``) happens alike under every seed: its
incidents are carried into each later grading, as the probe call's answer is (``cache``,
``seed_free_keys``); ``without_seeded`` shows a check only that.

Every reply is checked against the schema of its request's replies as it arrives
(``grader.wire.check_schema``) and parsed here (``grader.observe.returned``): a reply of the
wrong shape is the submission's doing (it can write to its own channel), a "protocol" incident,
never a grader error.
"""
from __future__ import annotations

import errno
import os
import shutil
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from grader.arguments import encode, flatten
from grader.errors import ChildFailure, Malformed, SandboxError
from grader.observe.confirmed import unconfirmed
from grader.observe.described import check_program, check_reply
from grader.observe.program import Program
from grader.observe.witnessed import Witnessed, witnessed
from grader.observe.returned import (Incident, Leaf, Returned, parse_compilations, parse_host, parse_jit_calls,
                                     parse_leaves, parse_programs, safe_reply, safe_text)
from grader.sandbox.limits import Limits
from grader.sandbox.process import INTERFERED, ChildProcess, Launch, Launcher
from grader.sandbox.witness import Witness, account_budget
from grader.source import helper_at, left_behind, left_behind_note
from grader.timings import Timings
from grader.wire import LoadReply, check_schema, decode_array, encode_array

# Of the time an import has, the share the notebook cells the graded function does not need have
# in all (``grader.child.run_cells``): a demo that hangs is skipped, and the cells
# the function needs keep the rest.
DEMO_SHARE = 0.5

# After this many incidents (time-outs, crashes, memory), further calls are not attempted:
# the report already says what went wrong, and each time-out costs the full call limit.
MAX_INCIDENTS = 2
# What parsing a reply raises when a field is of another type than the protocol says (a list
# where an object was, a string where a number was): read from the submission's channel, it is
# the submission's doing, a "protocol" incident, never a grader error ("not your fault", exit 3).
ILL_TYPED = (Malformed, ValueError, TypeError, KeyError, AttributeError, IndexError)


@dataclass
class Loaded:
    ok: bool
    stage: str = ""
    detail: dict[str, Any] = field(default_factory=dict)
    incident: Incident | None = None


@dataclass(frozen=True)
class Counterfactual:
    """A capturing call (``capture``) or the feeding call after it. Of eager device_puts only
    one counts: onto ``sharding``, of ``shape``, the ``turn``-th such one (each when given)."""
    capture: bool
    sharding: dict[str, Any] | None = None
    shape: tuple[int, ...] | None = None
    turn: int | None = None

    def request(self) -> dict[str, Any]:
        return {"capture": self.capture, "sharding": self.sharding, "turn": self.turn,
                "shape": None if self.shape is None else list(self.shape)}


@dataclass(frozen=True)
class Unanswered:
    """Where a verdict rests on the witness and it gave no answer: why (it could not run the
    account, crashed, was killed or ran out of time). Never a pass."""
    why: str


@dataclass(frozen=True)
class Traced:
    """What ``jax.make_jaxpr`` made of the function, or why it could not."""
    program: Program | None
    error: str | None = None


class Session:
    def __init__(self, submission: Path, function: str, parameters: tuple[str, ...], devices: int, limits: Limits,
                 compile_cache: str | None = None, launcher: Launcher | None = None,
                 hide: tuple[str, ...] = (), helpers: tuple[Path, ...] = (), early: ChildProcess | None = None) -> None:
        # A child started before the session (``jaxgrade check`` spawns it first thing): the first
        # child, if it was launched exactly as ``start`` would launch it; else closed unused.
        self._early = early
        self.launcher = launcher  # how children start: exec'd (None) or forked warm (grader.sandbox.pool)
        self.hide = hide  # folders the child must not see (the exercises; in a batch, the whole class)
        self.submission, self.function, self.parameters = submission, function, parameters
        self.factory = False  # the function is made by calling ``function()`` (grader.arguments.Signature)
        self.helpers = helpers  # the submission's own other modules, importable beside it
        self.compile_cache = compile_cache
        self.devices, self.limits = devices, limits
        self.incidents: list[Incident] = []
        # What the witness made of each fully recorded call's account, the first that diverged
        # kept over any other (grader.observe.witnessed); None before any full call.
        self.witnessed: Witnessed | None = None
        # How far the witness's recomputation may be from a call's result, on its arguments (the
        # value checks' tolerance, set by the engine); None: ``grader.observe.witnessed.RELATIVE``.
        self.tolerance: Callable[[Mapping[str, Any]], Any] | None = None
        self.withheld = False  # a check not shown to students yet is running (set by the engine)
        # Whether this grading has drawn inputs from its seed yet (Context.draw): calls from then on
        # may depend on it. The first grading's incidents met before that belong to every grading.
        self.seeded = False
        self._unseeded_calls = 0  # how many of ``calls`` were made before that
        self._unseeded_incidents: list[Incident] | None = None
        self._fresh = False  # the next call is a later grading's first (begin_grading)
        self.environment: dict[str, Any] = {}
        self.outputs: list[dict[str, Any]] = []
        self.calls: list[tuple[Mapping[str, Any], Returned]] = []  # every call and its arguments, in order
        # A full record whose account the witness is still checking (``call(settle=False)``): the
        # call as the child described it, the thread checking it, and what it found
        self._pending: tuple[Returned, threading.Thread, list[Any]] | None = None
        self._settled: dict[int, tuple[Returned, Returned]] = {}  # id(the call as described) -> (it, as witnessed)
        self._child: ChildProcess | None = None
        self._witness_process: Witness | None = None  # this grading's alone (grader.sandbox.witness)
        self._loaded: Loaded | None = None
        self._deadline = time.monotonic() + limits.total_s
        self._check_budget: tuple[float, float] | None = None  # (deadline, seconds) of the running check
        self.cache: dict[str, Any] = {}  # what checks share within a grading (Context.memo)
        self.seed_free_keys: set[str] = set()  # those of its entries every grading shares
        self.timings: Timings | None = None  # JAXGRADE_TIMINGS=1: where the time goes (grader.timings)

    # -- the child's life --------------------------------------------------------------------
    def start(self) -> ChildProcess:
        """Launch the child (if none is running) without waiting for it to be ready."""
        if self._child is None:
            launch = Launch(self.devices, self.limits, self.compile_cache,
                            (str(self.submission.resolve().parent), *self.hide), self.launcher)
            early, self._early = self._early, None
            if early is not None and early.launch == launch:
                self._child = early
            else:
                if early is not None:  # started for another grading than this one: no code of the student's ran in it
                    early.close()
                self._child = ChildProcess(launch.devices, launch.limits, launch.compile_cache, hide=launch.hide,
                                           launcher=launch.launcher)
        return self._child

    def _ready_child(self) -> ChildProcess:
        child = self.start()
        ready = child.ready
        self.environment = {"jax": ready.get("jax"), "devices": [safe_text(d, 100) for d in ready.get("devices", [])],
                            "platform": safe_text(ready.get("platform"), 20),
                            "protections": child.protections, "memory_limit": ready.get("memory_limit")}
        return child

    def _retire(self) -> None:
        if self._child is not None:
            self.outputs.append(self._child.close(settle=False))  # what it leaves is given back in the background
            self._child = None

    def close(self) -> dict[str, Any]:
        """End the child; return the student's output from every child this session ran,
        made safe to store and bounded (``limits.output_kib`` of head and of tail)."""
        self.settle_all()
        if self._early is not None:  # never started: the early child ran nothing of the student's
            self._early.close()
            self._early = None
        self._retire()
        if self._witness_process is not None:
            self._witness_process.close()
            self._witness_process = None
        keep = self.limits.output_kib << 10
        head = "".join(o["head"] for o in self.outputs)[:keep]
        tail = "".join(o["tail"] for o in self.outputs)[-keep:]
        total = sum(o["total_bytes"] for o in self.outputs)
        return {"head": safe_text(head, keep), "tail": safe_text(tail, keep), "total_bytes": total,
                "dropped_bytes": sum(o["dropped_bytes"] for o in self.outputs)}

    def begin_grading(self) -> None:
        """Start another grading of the same loaded submission (under another seed): its own
        calls, incidents and time limit, in the same child (a new one if the last was retired).
        The first grading's incidents met before it drew from its seed are kept: they came from
        calls every seed makes alike (the probe's, whose answer ``cache`` keeps, or the import),
        so each grading's limits check sees them, and whether it fails cannot depend on the seed."""
        self.settle_all()
        if self._unseeded_incidents is None:
            self._unseeded_incidents = [incident for incident in self.incidents if not incident.seeded]
        self.calls.clear()
        self.incidents = list(self._unseeded_incidents)
        self.cache = self._seed_free_cache()
        self.seeded, self._unseeded_calls = False, 0
        # JAX's C++ dispatch serves repeats of what the last grading ran (JAX's library keeps its
        # fast path in the cheap record), which would hide their host round trips: the child
        # clears it before this grading's first call, as it does after the import.
        self._fresh = True
        self._deadline = time.monotonic() + self.limits.total_s

    def _seed_free_cache(self) -> dict[str, Any]:
        """The memo entries every grading shares (``seed_free_keys``: the probe's call and trace)."""
        return {key: value for key, value in self.cache.items() if key in self.seed_free_keys}

    @contextmanager
    def without_seeded(self) -> Iterator[None]:
        """Inside, the grading shows only what it observed before drawing from its seed: the calls
        and incidents of then, and the shared observations every grading keeps (the probe's call
        and trace). What is observed inside (new calls, their incidents) is dropped after."""
        self.settle_all()
        kept = self.calls, self.incidents, self.cache
        self.calls = self.calls[:self._unseeded_calls]
        self.incidents = [incident for incident in self.incidents if not incident.seeded]
        self.cache = self._seed_free_cache()
        try:
            yield
        finally:
            self.calls, self.incidents, self.cache = kept

    @contextmanager
    def budget(self, seconds: float) -> Iterator[None]:
        """Give the requests made inside at most ``seconds`` in all (one check's budget)."""
        self._check_budget = (time.monotonic() + seconds, seconds)
        try:
            yield
        finally:
            self._check_budget = None

    def _limit(self) -> tuple[float, str]:
        """The time the next request has, and the limit that sets it, in words."""
        now = time.monotonic()
        limits = [(self.limits.call_s, f"{self.limits.call_s:g} s (the limit for one call)")]
        if self._check_budget is not None:
            deadline, seconds = self._check_budget
            limits.append((deadline - now, f"{seconds:g} s (this check's time budget, for all its calls together)"))
        limits.append((self._deadline - now, f"{self.limits.total_s:g} s (the limit for the whole grading)"))
        return min(limits, key=lambda pair: pair[0])

    def _request(self, message: dict[str, Any], during: str) -> dict[str, Any]:
        now = time.monotonic()  # where the parent starts waiting (the first request's: for the child's start)
        timeout, which = self._limit()
        if timeout <= 0:
            raise ChildFailure("time", f"grading stopped {during}: your code had used up its {which}")
        try:
            child = self._ready_child()
            asked = time.monotonic()
            reply = child.request(message, timeout, during, keep=safe_reply)
            check_schema(message["op"], reply)  # the schema of what this request may get back (grader.wire)
            if self.timings is not None:
                self._time(child, message, time.monotonic() - asked, reply.get("timing"), now)
            return reply
        except Malformed as error:
            self._retire()
            raise ChildFailure("protocol", f"{INTERFERED} malformed data {during} ({error})") from None
        except ChildFailure as failure:
            self._retire()
            if failure.kind == "sandbox":  # the grader's fault, never the submission's: an "error" check
                raise SandboxError(failure.message) from None
            if failure.kind == "time" and "CPU time" not in failure.message:
                failure.message = f"your code did not finish within {which} {during}"
            raise

    def _time(self, child: ChildProcess, message: dict[str, Any], seconds: float, reported: Any,
              waited: float) -> None:
        """Note a request's round trip and what the child said of its time (grader.timings)."""
        assert self.timings is not None
        self.timings.mark("waiting", waited)  # the first request: the parent waits for the child from here
        if child.greeted_at is not None:
            self.timings.started(child.spawned_at, child.greeted_at, child.ready.get("timing"))
        self.timings.request(str(message.get("op")), seconds, reported)

    def _incident(self, failure: ChildFailure) -> Incident:
        incident = Incident(failure.kind, safe_text(failure.message), seeded=self.seeded, withheld=self.withheld)
        self.incidents.append(incident)
        return incident

    def _protocol(self, error: Exception, during: str) -> Incident:
        """A reply of the wrong shape: the child's channel was forged; the child cannot be trusted."""
        self._retire()
        return self._incident(ChildFailure("protocol", f"{INTERFERED} malformed data {during} "
                                                       f"({safe_text(error, 200)})"))

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
            self._loaded = Loaded(False, "read", {"error": safe_text(f"{error.strerror or error}: "
                                                                     f"{self.submission.name}")})
            return self._loaded
        try:
            # a notebook's cells the function does not need have a share of the import's time, in all
            demo_s = round(max(self._limit()[0], 0.0) * DEMO_SHARE, 3)
            reply = self._request({"op": "load", "path": str(copy), "display_name": _shown(self.submission.name),
                                   "function": self.function, "arity": len(self.parameters),
                                   "factory": self.factory, "demo_s": demo_s},
                                  "while importing your file")
        except ChildFailure as failure:
            self._loaded = Loaded(False, "incident", incident=self._incident(failure))
            return self._loaded
        detail = {k: v for k, v in reply.items()
                  if k in ("ok", "stage", "error", "line", "text", "exception", "type", "signature", "accepts",
                          "made_by")}
        if "defined" in reply:
            detail["defined"] = [safe_text(d, 100) for d in reply["defined"][:50]]
        detail.update(_cells_of(reply))
        ok = reply.get("ok") is True and reply.get("accepts") is True
        if not ok and isinstance(detail.get("error"), str):  # most likely an import of what stayed behind
            note = left_behind_note(left_behind(self.submission, self.function), self.function)
            detail["error"] = f"{detail['error']}. {note}" if note else detail["error"]
        stage = detail.get("stage", "signature" if reply.get("ok") else "unknown")
        self._loaded = Loaded(ok, "" if ok else str(stage), detail)
        return self._loaded

    def _copy_in(self) -> Path:
        """The submission and its helper modules, copied into the child's working directory
        (which the child imports from), each helper at its path under the submission's folder
        (a package keeps its folders); returns the submission's copy."""
        workdir = Path(self.start().workdir)
        main = _shown(self.submission.name)
        for helper in self.helpers:
            shown = tuple(_shown(part) for part in helper_at(self.submission, helper).parts)
            if shown != (main,):
                _copy(helper, workdir, *shown)
        return _copy(self.submission, workdir, main)

    def _named(self, arguments: Mapping[str, Any]) -> list[list[Any]]:
        return [[name, encode(arguments[name])] for name in self.parameters]

    def call(self, arguments: Mapping[str, Any], record: str = "placements",
             counterfactual: Counterfactual | None = None, settle: bool = True) -> Returned:
        """Run the function once on ``arguments`` (a dict by parameter name); a crash or
        time-out becomes an incident. ``record="full"`` also records the program the call ran.
        ``counterfactual``: a capturing call keeps what the function's placing operations
        receive (of eager device_puts, only the one it names); the next feeding call hands them
        those values instead
        (``Returned.swapped`` counts them). Fed calls are not kept in ``calls``: their answers
        are not the function's on ``arguments``. ``settle=False``: a full record comes back as
        the child described it, while the witness checks its account beside the calls that follow
        (its first account is the one a check would otherwise wait for); ``settled`` gives it as
        witnessed."""
        if len(self.incidents) >= MAX_INCIDENTS:
            return Returned(False, incident=Incident("gave_up", f"grading stopped calling it after {MAX_INCIDENTS} "
                                                                "failures", withheld=self.withheld))
        reloaded = self._reload()
        if reloaded is not None:
            return Returned(False, incident=reloaded)
        # Incidents name no input: the limits check is shown to students even when the check
        # whose hidden input caused the incident is not (the failing check names its input).
        during = f"while calling {self.function}({', '.join(self.parameters)})"
        request = {"op": "call", "arguments": self._named(arguments), "mode": record}
        if counterfactual is not None:
            request["counterfactual"] = counterfactual.request()
        if self._fresh:
            request["fresh"], self._fresh = True, False
        asked = time.monotonic()
        try:
            reply = self._request(request, during)
        except ChildFailure as failure:
            return Returned(False, incident=self._incident(failure))
        try:
            returned = replace(self._returned(reply, during), seconds=time.monotonic() - asked)
        except ILL_TYPED as error:
            return Returned(False, incident=self._protocol(error, during))
        if record == "full" and returned.ok:
            if settle:
                returned = self._witnessed(returned, arguments)
            else:
                self._witness_later(returned, arguments)
        if counterfactual is None or counterfactual.capture:
            self.calls.append((arguments, returned))
            if not self.seeded:
                self._unseeded_calls = len(self.calls)
        return returned

    def _witness_later(self, returned: Returned, arguments: Mapping[str, Any]) -> None:
        """Check ``returned``'s account in a thread of its own (it waits on the witness's pipe);
        the witness is this thread's, asked nothing else until ``settle_all``."""
        self.settle_all()
        witness, found = self._witness(), []
        # started from this thread, which outlives the check: a process dies with the thread that
        # started it (PR_SET_PDEATHSIG), and the one below ends with the check
        witness.warm()
        thread = threading.Thread(target=lambda: found.append(self._witnessed(returned, arguments, witness)),
                                  name="jaxgrade-witnessing", daemon=True)
        self._pending = (returned, thread, found)
        thread.start()

    def settled(self, returned: Returned) -> Returned:
        """A full record as the witness checked it (``call(settle=False)``); any other as it is."""
        self.settle_all()
        known = self._settled.get(id(returned))
        return known[1] if known is not None and known[0] is returned else returned

    def settle_all(self) -> None:
        """Wait for the account being checked, if any; its verdict is ``witnessed`` from then on,
        and the call is kept in ``calls`` as witnessed."""
        if self._pending is None:
            return
        raw, thread, found = self._pending
        with self._waiting_for_witness():
            thread.join()
        self._pending = None
        checked = found[0] if found else replace(raw, unverified="the witness could not check it")
        self._settled[id(raw)] = (raw, checked)
        self.calls = [(arguments, checked if call is raw else call) for arguments, call in self.calls]

    def _witness(self) -> Witness:
        """This grading's witness, started as its child is (forked warm where the child is, else
        exec'd), confined as it is, with the witness's compilation cache where the grading has a
        cache at all."""
        if self._witness_process is None:
            self._witness_process = Witness(self.devices, self.limits, self.compile_cache,
                                            (str(self.submission.resolve().parent), *self.hide), self.launcher)
        return self._witness_process

    @contextmanager
    def _waiting_for_witness(self) -> Iterator[None]:
        """Time spent waiting for the witness is not the submission's: the grading's deadline and
        the running check's move on by as much."""
        started = time.monotonic()
        try:
            yield
        finally:
            waited = time.monotonic() - started
            self._deadline += waited
            if self._check_budget is not None:
                deadline, seconds = self._check_budget
                self._check_budget = (deadline + waited, seconds)

    def _witnessed(self, returned: Returned, arguments: Mapping[str, Any], witness: Witness | None = None) -> Returned:
        """The call as the witness re-derives it: on a reproduced account, the witness's own
        reading of the programs stands for the child's."""
        tolerance = self.tolerance(arguments) if self.tolerance is not None else None
        budget = account_budget(returned.seconds)
        if witness is None:
            self.settle_all()  # one account at a time on this grading's witness
            with self._waiting_for_witness():
                answer = self._witness().check(returned.account, self._named(arguments), budget)
        else:  # in a thread of its own, while the child goes on: nobody waits for it yet
            answer = witness.check(returned.account, self._named(arguments), budget)
        verdict = witnessed(answer, returned.leaves, tolerance)
        if verdict.status == "reproduced":
            paths = [path for name in self.parameters for path, _ in flatten(arguments[name], name)]
            differs = unconfirmed(returned.program, returned.placements, returned.leaves, returned.account, paths,
                                  verdict.placed, verdict.outputs, verdict.memory_kind, verdict.ran)
            if differs is not None:
                verdict = Witnessed("diverged", differs)
        if self.witnessed is None or self.witnessed.status != "diverged":
            self.witnessed = verdict
        if verdict.status == "reproduced":
            # a step that could not be handed over (a program using a host callback's result):
            # what XLA made of it is unknown, so the facts read off the programs are not all there
            return replace(returned, programs=verdict.programs, reproduced=not verdict.breaks, held=verdict.held,
                           unverified=verdict.breaks[0] if verdict.breaks else None)
        if verdict.status == "unverifiable":
            return replace(returned, unverified=verdict.detail or "the witness could not run it")
        return returned

    def replay_placed(self, returned: Returned, arguments: Mapping[str, Any], leaf: int, sharding: dict[str, Any],
                      value: np.ndarray) -> tuple[Leaf, ...] | Unanswered | None:
        """What a fully recorded call's own operations give, run again by the witness with every
        eager placement of argument leaf ``leaf`` (in call order) onto ``sharding`` placing
        ``value`` instead. ``Unanswered`` where the witness gave no answer (it could not run the
        account, failed, or ran out of time): a verdict resting on it then fails. None where
        there is nothing to replay: an account cut by host work (judged as such), or one that
        places no such leaf."""
        if returned.unverified is not None:
            return Unanswered(returned.unverified)
        if not returned.reproduced:
            return None
        self.settle_all()
        with self._waiting_for_witness():
            answer = self._witness().check(returned.account, self._named(arguments), account_budget(returned.seconds),
                                           {"arg": leaf, "sharding": sharding, "value": encode_array(value)})
        if answer.get("ok") is not True:
            return Unanswered(safe_text(answer.get("unverifiable") or answer.get("malformed")
                                        or "the witness gave no answer", 300))
        if answer.get("swapped", 0) < 1:
            return None
        try:
            outputs = [decode_array(o) if o is not None else None for o in answer["outputs"]]
        except (KeyError, TypeError, ValueError):
            return Unanswered("the witness's answer was unreadable")
        if len(outputs) != len(returned.leaves):
            return Unanswered(f"the witness's replay computed {len(outputs)} values where the call returned "
                              f"{len(returned.leaves)}")
        return tuple(replace(leaf_, array=o) for leaf_, o in zip(returned.leaves, outputs))

    def _returned(self, reply: dict[str, Any], during: str) -> Returned:
        if reply.get("internal") is True:
            # The child's own code failed, or says so: it runs inside the submission's process, where
            # the submission can cause that (its open files, patched modules) or forge the reply.
            self._retire()
            return Returned(False, incident=self._incident(ChildFailure(
                "protocol", f"the grader's code inside your process failed {during} "
                            f"({safe_text(reply.get('error'), 300)}); what your code did in its process (open "
                            "files or descriptors, patched modules, writes to the grader's channel) caused it")))
        check_reply(reply)  # the descriptions checks read field by field
        placements = reply.get("placements") or []
        if reply.get("ok") is not True:
            error, exception = safe_text(reply.get("error", "")), safe_text(reply.get("exception", ""), 100)
            return Returned(False, error=error, exception=exception, placements=tuple(placements),
                            incident=self._exception_incident(exception, error, during))
        program = Program.from_data(reply["program"]) if "program" in reply else None
        return Returned(True, leaves=parse_leaves(reply["value"]), placements=tuple(placements), program=program,
                        intact=reply.get("intact") is not False, jit_calls=parse_jit_calls(reply.get("jit_calls", [])),
                        compilations=parse_compilations(reply.get("compilations", [])),
                        host=parse_host(reply.get("host", [])), swapped=_count(reply.get("swapped")),
                        programs=parse_programs(reply.get("programs", [])),
                        between_bytes=_count(reply.get("between_bytes")) or 0, account=reply.get("account"))

    def _exception_incident(self, exception: str, error: str, during: str) -> Incident | None:
        """Exceptions that are really a limit or the end of the process become incidents."""
        if exception in ("MemoryError", "_ArrayMemoryError") or "RESOURCE_EXHAUSTED" in error:
            limit = self.environment.get("memory_limit")
            mib = limit >> 20 if isinstance(limit, int) and limit > 0 else self.limits.memory_mib
            return self._incident(ChildFailure("memory", f"your code ran out of memory (limit {mib} MiB) {during}"))
        if exception == "RecursionError":  # the recursion limit is what guards the stack
            return self._incident(ChildFailure("memory", f"your code recursed too deeply {during}"))
        if exception in ("SystemExit", "KeyboardInterrupt"):  # would end the process outside a grader
            what = "called sys.exit()" if exception == "SystemExit" else "raised KeyboardInterrupt"
            return self._incident(ChildFailure(
                "crash", f"your code {what} {during}; a function must return its result, not end the program"))
        return None

    def _reload(self) -> Incident | None:
        """After an incident ended the child, a fresh one imports the submission again before
        anything else is asked of it; an incident if it no longer loads."""
        if self._child is None and self._loaded is not None:
            loaded = self.load()
            if not loaded.ok:
                return loaded.incident or Incident("crash", "the file no longer loads")
        return None

    def trace(self, arguments: Mapping[str, Any]) -> Traced:
        during = f"while tracing {self.function}({', '.join(self.parameters)}) with jax.make_jaxpr"
        reloaded = self._reload()
        if reloaded is not None:
            return Traced(None, reloaded.message)
        try:
            reply = self._request({"op": "trace", "arguments": self._named(arguments)}, during)
        except ChildFailure as failure:
            return Traced(None, self._incident(failure).message)
        if reply.get("ok") is not True:
            return Traced(None, safe_text(reply.get("error", "the trace failed")))
        try:
            if isinstance(reply.get("program"), dict):
                check_program(reply["program"])
            return Traced(Program.from_data(reply["program"]))
        except ILL_TYPED as error:
            return Traced(None, self._protocol(error, during).message)


def _count(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Malformed("a count is not a natural number")
    return value


def _copy(source: Path, workdir: Path, *parts: str) -> Path:
    """Copy ``source`` to ``workdir/parts...``, making its folders. Every step is taken from the
    folder before it without following links (O_NOFOLLOW, dir_fd), and the file is new
    (O_EXCL): the workdir belongs to the sandbox; never write through a link in it."""
    with open(source, "rb") as reading:
        folder = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in parts[:-1]:
                try:
                    os.mkdir(part, 0o755, dir_fd=folder)
                except FileExistsError:
                    pass
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
                os.close(folder)
                folder = inner
            target = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=folder)
        finally:
            os.close(folder)
        with open(target, "wb") as copy:
            shutil.copyfileobj(reading, copy)
    return workdir.joinpath(*parts)


def _cells_of(reply: LoadReply) -> dict[str, Any]:
    """What a load reply says of a notebook's cells: the cell whose failure failed the load
    (``cell``, ``needed``), the cells skipped because they failed (``skipped``: cell, line, error;
    at most 20) and how many there were in all."""
    found: dict[str, Any] = {}
    if "cell" in reply and "needed" in reply:
        found.update(cell=reply["cell"], needed=reply["needed"])
    if "skipped" in reply:
        found["skipped"] = [{"cell": s["cell"], "line": s["line"], "error": safe_text(s["error"], 200),
                             **({"stopped": True} if s.get("stopped") is True else {})} for s in reply["skipped"][:20]]
        found["skipped_count"] = max(reply.get("skipped_count", 0), len(found["skipped"]))
    return found


def _shown(name: str) -> str:
    """A file name as the child may use it (compiled code, tracebacks, JAX's source info): bytes
    that are not UTF-8 written as \\xNN escapes, so every layer can encode it."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
