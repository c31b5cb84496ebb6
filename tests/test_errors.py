"""grader.errors: one root, user, grader and submission faults apart, each with its exit code."""
from __future__ import annotations

import inspect

import grader.errors as errors
from grader.errors import ExitCode, GraderFault, JaxgradeError, PoolError, SubmissionFault, UserFault
from grader.sandbox.pool import Pool

KINDS = (UserFault, GraderFault, SubmissionFault)


def test_every_error_is_exactly_one_kind_of_fault_with_that_kinds_exit_code():
    found = [c for _, c in inspect.getmembers(errors, inspect.isclass)
             if issubclass(c, Exception) and c is not JaxgradeError and c not in KINDS]
    assert len(found) >= 14
    for error in found:
        kinds = [kind for kind in KINDS if issubclass(error, kind)]
        assert len(kinds) == 1, (error, kinds)
        assert error.exit_code is kinds[0].exit_code
    assert (UserFault.exit_code, GraderFault.exit_code) == (ExitCode.USAGE, ExitCode.UNGRADABLE) == (2, 3)


def test_a_pool_error_is_not_an_os_error():
    """Code handling a file or a socket catches OSError: a pool that cannot fork is another matter."""
    assert not issubclass(PoolError, OSError)


def test_warming_a_closed_pool_is_still_best_effort():
    pool = Pool()
    pool.close()
    pool.warm(1, None)  # a closed pool raises PoolError on launch; warming it does nothing
