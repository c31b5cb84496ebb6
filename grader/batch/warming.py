"""The exercise's variants added to the compilation cache after a class run, in the background.

A class run fills the cache from the exercise's right/ and wrong/ variants only when it grades
enough submissions to repay their gradings (``grader.engine.variants_repay``), so a first run of
the term is not held up by them (48 gradings, 9.5 s, on the seed exercise). What they add still
spares later runs the compiles their mistakes share with the variants. So a run that skipped
them leaves one process behind (``start``) that grades them once the run's process has exited:
at nice 19, its autogroup's too (it yields the CPU to anything else the user runs:
``yield_the_cpu``), in a session of its own, with nothing of the run's but its environment and
its ``sys.path``, and one at a time for all exercises (a lock beside the markers: a script
grading ten exercises in a row leaves one at work, not ten zygotes and their children; the later
runs of the others start theirs again).
It writes the marker as a big run would; no run starts it again.

Off where no process may outlive the command (``background_allowed``): ``JAXGRADE_NO_DAEMON``
set, or a CI job (``CI`` set). The warm grading service (grader.warm) obeys the same switch.
"""
from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from grader.cache import warmed_marker

if TYPE_CHECKING:  # grader.warm.place asks background_allowed on every check: nothing heavy here
    from grader.authoring.exercise import Exercise

LOCK = "background.lock"  # one at work at a time: the others exit, their marker left unwritten
OFF = "JAXGRADE_NO_DAEMON"  # set (not "0" or empty): nothing outlives the command
WAIT_FOR_RUN_S = 24 * 3600.0  # a run (or an instructor's script) that has not exited by then: go ahead
BOOT = ("import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
        "from grader.batch.warming import main; main(sys.argv[2:])")


def background_allowed(environ: Mapping[str, str]) -> bool:
    """Whether a process may outlive the command that started it: not with ``JAXGRADE_NO_DAEMON``
    set, nor in a CI job (``CI`` set: the job's end would find it running)."""
    return environ.get(OFF, "") in ("", "0") and environ.get("CI", "") in ("", "0", "false")


def start(exercise: Exercise) -> bool:
    """Start filling the cache from ``exercise``'s variants once this process has exited; False
    where it is off, already filled, or the process could not start."""
    marker = warmed_marker(exercise.slug, exercise.fingerprint, "variants")
    if marker is None or marker.exists() or not background_allowed(os.environ):
        return False
    return spawn_detached(BOOT, [json.dumps([p or os.getcwd() for p in sys.path]), str(exercise.directory),
                                 str(os.getpid())])


def spawn_detached(boot: str, arguments: list[str]) -> bool:
    """``python -I -c boot ARGUMENTS`` in the background, in a session of its own, with nothing of
    this process's but ``os.environ`` (not the C environment: a library such as readline may have
    set LINES and COLUMNS there, and a warm service whose environment is not its name's exits);
    False where it could not start. (The warm service starts so too.)"""
    import subprocess  # here: grader.warm.place imports this module on every check
    try:
        subprocess.Popen([sys.executable, "-I", "-c", boot, *arguments], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/", start_new_session=True,
                         env=dict(os.environ))
    except OSError:
        return False
    return True


def yield_the_cpu() -> None:
    """Nice 19, for this process and for its autogroup. In a session of its own a process is in
    an autogroup of its own (Linux's CONFIG_SCHED_AUTOGROUP, on in most distributions), and the
    CPU is shared between autogroups before niceness counts inside one: measured here, two busy
    processes at nice 19 in sessions of their own slowed two others in the user's session 3.3x
    (9.7 s against 2.9 s), and not at all once their autogroup's nice was 19 too (2.4-2.8 s).
    Any user may raise an autogroup's nice; where there is no autogroup (another kernel or OS)
    the process's own nice is what counts."""
    os.nice(19)
    try:
        with open("/proc/self/autogroup", "w") as autogroup:
            autogroup.write("19")
    except OSError:
        pass


def main(argv: list[str]) -> None:
    """In the background process: ``argv`` is the exercise's folder and the run's pid."""
    from grader.engine import warm_compile_cache, warm_compile_cache_from_variants
    from grader.authoring.exercise import load_exercise
    from grader.sandbox.reaper import wait_for_exit
    folder, run = Path(argv[0]), int(argv[1])
    wait_for_exit(run, WAIT_FOR_RUN_S)
    yield_the_cpu()
    exercise = load_exercise(folder)
    marker = warmed_marker(exercise.slug, exercise.fingerprint, "variants")
    if marker is None:
        return
    marker.parent.mkdir(parents=True, exist_ok=True)
    with open(marker.parent / LOCK, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another one is at it (this exercise's, or another's: a later run starts this one again)
            return
        directory = warm_compile_cache(exercise)  # filled by the run already: only its folder
        if directory is not None:
            warm_compile_cache_from_variants(exercise, directory)
