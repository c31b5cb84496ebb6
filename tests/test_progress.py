"""grader.batch.progress: the class run's progress line, and an ETA that weighs each submission
by what it took last time (a run that starts with its slowest would otherwise be told one
several times too long)."""
from __future__ import annotations

import io
from types import SimpleNamespace

import grader.batch.progress as progress_module
from grader.batch.progress import Progress


def test_the_eta_weighs_each_submission_by_what_it_took_last_time(monkeypatch):
    now = [100.0]  # the meter's clock, moved by hand: nine seconds for the slow one
    monkeypatch.setattr(progress_module, "time", SimpleNamespace(monotonic=lambda: now[0]))
    plain, weighed = (Progress(4, io.StringIO(), interactive=False) for _ in range(2))
    weighed.expect({"slow": 9.0, "ann": 1.0, "bo": 1.0, "cy": 1.0})
    now[0] += 9.0
    for meter in (plain, weighed):
        meter.update("slow", "passed", "10/10")
    assert plain.stream.getvalue() == "[1/4] slow: 10/10 passed (ETA 0:27)\n"  # 9 s each, 3 to go
    assert weighed.stream.getvalue() == "[1/4] slow: 10/10 passed (ETA 0:03)\n"  # 9 s of 12 done
    now[0] += 1.0
    weighed.update("ann", "failed", "0/10")
    assert weighed.stream.getvalue().splitlines()[-1] == "[2/4] ann: 0/10 failed (ETA 0:02)"

