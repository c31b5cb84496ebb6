"""The warm path of ``jaxgrade check`` and of ``grader.check()`` in a notebook (issue #43, point
2): a per-user grading service that has already imported what a check needs (the grader,
Hypothesis, Jinja2) and holds a zygote that has imported JAX, so a second check costs a fork and
the checks, not a Python start and a JAX import; and one zygote serves every open notebook of
the user's, where each kernel would otherwise keep a JAX process of its own.

``grader.warm.place``: where its socket lives and what names it (the grader's code, the
interpreter, the environment that matters), and the checks that only its user can reach it.
``grader.warm.frames``: the few frames the clients and the service exchange.
``grader.warm.client``: what a check does first: ask the service, else start one in the
background and grade in-process as before (any failure is a silent fallback).
``grader.notebook.warm_cells``: a notebook check's request (the kernel's cells), read as hostile, and how
the service grades it (as the kernel would, grader.notebook.kernel_cells).
``grader.warm.service``: the service itself; every submission still runs only in a fresh
sandboxed child, forked for that check from the service's zygote (docs/threat-model.md).
"""
