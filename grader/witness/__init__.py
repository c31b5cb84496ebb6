"""The witness: a process that never runs a submission's code, and re-derives from the
account a child hands over (``grader.child.account``) the facts a verdict rests on.

It runs the account's programs again on the grader's own arguments, so the parent can check
that the account reproduces what the call returned (``grader.observe.witnessed``), and reads
what XLA makes of each program (collectives, how often a loop runs them, memory) from its own
compilation: nothing the submission runs can edit these facts, and an account that was edited
no longer reproduces the value, or is the honest program itself. This package is the process's
side (``__main__``, ``rerun``); the grader starts, confines and asks it through
``grader.sandbox.witness``.
"""
