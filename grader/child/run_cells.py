"""A converted notebook run cell by cell in the child, as Jupyter's Run All runs it (the table of
cells comes with the file: ``grader.child.cells``), with a time bound of their own for the
cells the graded function does not need (a demo that hangs is skipped and named)."""
from __future__ import annotations

import traceback
from typing import Any

from grader.child.error_text import error_head
from grader.errors import CellFailed, CellTimeout
from grader.wire import Skipped

# A notebook cell the function does not need is not run with less time than this.
MIN_CELL_S = 0.05
# Each skipped cell's error, in this many characters.
MAX_SKIPPED_TEXT = 200


def run_cells(filename: str, source: bytes, cells: list[Any], namespace: dict[str, Any],
              skipped: list[Skipped], function: str = "", demo_s: float | None = None) -> None:
    """Run a converted notebook cell by cell in one namespace, as Jupyter's Run All does,
    except that a cell the function does not need that raises an Exception (or calls
    sys.exit) is skipped, added to ``skipped`` (number, line in the cell, error), and the
    next one runs: Jupyter shows the error and the student goes on. A needed cell that
    fails, and any cell that raises KeyboardInterrupt or another BaseException, raises
    ``CellFailed``; ``os._exit`` ends the child as it would any file. Each cell is
    compiled from the file's own syntax tree, so its line numbers are the file's.

    Time: the cells the function does not need have ``demo_s`` seconds in all (a share of
    the load's limit, so the needed cells keep the rest), each at most half of what is left
    of them (a demo after one that hung still runs): a timer (SIGALRM, sent to this thread)
    interrupts one still running then, and it is skipped as one that did not finish; once
    less than ``MIN_CELL_S`` would be left, such cells are skipped without running. A cell
    that catches the interruption and goes on is stopped by the load's own limit, in the
    parent, as any import that does not finish.

    The cell marked ``graded`` holds the definition of ``function`` the kernel ran last
    (``grader.notebook.runs``): once every cell ran, ``function`` is bound again to what
    that cell bound, whatever a cell below it (a draft run earlier) bound since."""
    import ast
    import bisect
    import signal
    import threading
    import time
    tree = compile(source, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    # ``from __future__`` holds for the whole file: each cell is compiled with its flags
    flags = 0
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
            import __future__
            for alias in statement.names:
                flags |= getattr(__future__, alias.name).compiler_flag
    starts = [cell.first_line for cell in cells]
    bodies: dict[int, list[ast.stmt]] = {}
    for statement in tree.body:  # a statement belongs to the cell it starts in
        bodies.setdefault(max(bisect.bisect_right(starts, statement.lineno) - 1, 0), []).append(statement)
    # None: no bound of their own (signal handlers can be set only in the main thread)
    left = demo_s if demo_s is not None and demo_s > 0 and threading.current_thread() is threading.main_thread() \
        else None
    graded: list[Any] = []  # what the graded cell bound to ``function``
    alarm = _Alarm()
    previous = signal.getsignal(signal.SIGALRM)
    try:
        for index, body in sorted(bodies.items()):
            cell = cells[index]
            code = compile(ast.Module(body=body, type_ignores=[]), filename, "exec", flags,
                           dont_inherit=True)
            bounded = left is not None and not cell.needed
            share = left / 2 if left is not None else 0.0  # each may take half of what is left
            if bounded and share < MIN_CELL_S:
                skipped.append({"cell": cell.number, "line": None, "stopped": True,
                                "error": f"was not run: the cells your function does not need had used up their "
                                         f"{demo_s:.3g} s"})
                continue
            started = time.monotonic()
            try:
                try:
                    if bounded:
                        signal.signal(signal.SIGALRM, alarm.interrupt)
                        alarm.arm(share)
                    exec(code, namespace)
                finally:
                    alarm.disarm()
            except CellTimeout as error:
                if not bounded:  # not the timer's: the cell raised it itself
                    raise CellFailed(cell.number, cell.needed, error) from None
                skipped.append({"cell": cell.number, "line": None, "stopped": True,
                                "error": f"did not finish within {share:.2g} s (half the time left to the cells "
                                         f"your function does not need, {demo_s:.3g} s in all)"})
            except (Exception, SystemExit) as error:
                if cell.needed:
                    raise CellFailed(cell.number, True, error) from None
                # the cell's own statement that raised, counted from the cell's first line as Jupyter shows it
                frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == filename]
                line = frames[0].lineno - cell.first_line if frames and frames[0].lineno else None
                first = (error_head(error).splitlines() or [type(error).__name__])[0]
                skipped.append({"cell": cell.number, "line": line, "error": first[:MAX_SKIPPED_TEXT]})
            except BaseException as error:
                raise CellFailed(cell.number, cell.needed, error) from None
            finally:
                if bounded:
                    left -= time.monotonic() - started
            if cell.graded and function in namespace:
                graded[:] = [namespace[function]]
    finally:
        alarm.disarm()
        if left is not None and previous is not None:  # None: a handler not set from Python
            signal.signal(signal.SIGALRM, previous)
    if graded:
        namespace[function] = graded[0]


class _Alarm:
    """Interrupts the thread that armed it after some seconds, with SIGALRM sent to that thread
    (a signal sent to the process may land on one of JAX's threads, which would not wake a
    ``time.sleep`` in the cell). Each arming has its token: a signal that arrives after
    ``disarm`` (sent just before it) interrupts nothing."""

    def __init__(self) -> None:
        import threading
        self.lock = threading.Lock()
        self.token: object | None = None
        self.timer: Any = None

    def arm(self, seconds: float) -> None:
        import signal
        import threading
        token, thread = object(), threading.get_ident()

        def ring() -> None:
            with self.lock:
                if self.token is token:
                    signal.pthread_kill(thread, signal.SIGALRM)

        with self.lock:
            self.token = token
        self.timer = threading.Timer(seconds, ring)
        self.timer.daemon = True
        self.timer.start()

    def disarm(self) -> None:
        with self.lock:
            self.token = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def interrupt(self, number: int, frame: Any) -> None:
        # no lock here: the handler runs in the thread that may hold it (in ``disarm``)
        if self.token is not None:
            self.token = None  # once: a cell that catches it is left to the load's own limit
            raise CellTimeout()
