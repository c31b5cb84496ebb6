"""Raises an exception with an 8 MiB message: the report must stay small (messages are bounded
where they enter the grader)."""


def replicated_sharding_value(x):
    raise ValueError("A" * (8 << 20))
