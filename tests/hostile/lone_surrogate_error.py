"""Raises an exception whose message holds a lone surrogate, which no UTF-8 output can encode:
every report format and file must still be written, with the character replaced."""


def replicated_sharding_value(x):
    raise ValueError("bad \udc80 byte")
