"""grader.wire: the channel between grader and child, over real pipes."""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from grader.errors import ChannelClosed
from grader.wire import decode_array, encode_array, read_message, write_message


@pytest.mark.parametrize("array", [
    np.float32(2.5).reshape(()), np.array([], np.float32), np.array([np.nan, np.inf, -0.0], np.float32),
    np.arange(12, dtype=np.int64).reshape(3, 4), np.ones((2, 3), np.float64)[:, ::2],
])
def test_arrays_round_trip_exactly(array):
    back = decode_array(encode_array(array))
    assert back.dtype == array.dtype and back.shape == array.shape
    assert np.array_equal(back, array, equal_nan=True)
    assert np.signbit(back).tolist() == np.signbit(array).tolist()


def test_object_arrays_are_refused():
    with pytest.raises(ValueError):
        decode_array({"dtype": "|O", "shape": [1], "b64": ""})


def test_messages_cross_a_pipe_and_a_closed_pipe_is_reported():
    r, w = os.pipe()
    big = {"op": "call", "input": encode_array(np.arange(100_000, dtype=np.float32))}  # larger than a pipe buffer
    writer = threading.Thread(target=write_message, args=(w, big))
    writer.start()
    message = read_message(r)
    writer.join()
    assert message["op"] == "call" and decode_array(message["input"]).size == 100_000
    os.close(w)
    with pytest.raises(ChannelClosed):
        read_message(r)
    os.close(r)


def test_oversized_length_prefix_is_refused():
    r, w = os.pipe()
    os.write(w, (1 << 31).to_bytes(4, "big"))
    with pytest.raises(ChannelClosed):
        read_message(r)
    os.close(r), os.close(w)
