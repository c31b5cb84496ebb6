"""Pretends the user pressed Ctrl-C during the call."""


def replicated_sharding_value(x):
    raise KeyboardInterrupt
