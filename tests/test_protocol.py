"""grader.wire: the channel between grader and child, over real pipes."""
from __future__ import annotations

import json
import os
import threading

import numpy as np
import pytest

from grader.errors import ChannelClosed, Malformed
from grader.wire import (_WINDOW as WINDOW, HEADER, decode_array, decode_message, encode_array, fits, frame, read_message,
                         values_bound, write_message)


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


def _outside_strings(text: str) -> int:
    """A plain reading of JSON text, a character at a time: one more than the bytes where a value
    can begin (, : [ {) outside strings, as grader.wire.values_bound counts them."""
    count, inside, escaped = 1, False, False
    for char in text:
        if inside:
            inside, escaped = (escaped or char != '"'), (not escaped and char == "\\")
        elif char == '"':
            inside = True
        elif char in ",:[{":
            count += 1
    return count


def test_a_flood_of_values_is_refused_before_it_is_decoded():
    flood = b"[" + b",".join([b"[]"] * 3_000_000) + b"]"  # 9 MB: 3 million lists decoded, ~200 MiB
    with pytest.raises(Malformed, match="JSON values"):
        decode_message(bytearray(flood))
    assert values_bound(flood, 1000) > 1000
    assert not fits(HEADER.pack(len(flood)) + flood)


def test_separators_inside_strings_are_not_values():
    """A reply whose text holds a million commas (an error message, a repr) is read exactly:
    what the strings hold, escaped quotes and backslashes included, is not counted."""
    message = {"ok": False, "error": ',"\\,[{' * 1_200_000, "placements": [], "list": [[], {"a": 1}]}
    data = frame(message)
    body = data[HEADER.size:]
    exact = _outside_strings(body.decode())
    assert exact < 20 and body.count(b",") > 2_000_000
    assert values_bound(body, exact) == exact  # more than ``exact`` only where strings were counted
    assert fits(data) and decode_message(bytearray(body)) == message


@pytest.mark.parametrize("escapes", ['\\', '"', '\\"', '\\\\', 'x\\'])
def test_escapes_across_the_scanning_windows_are_read_as_json_reads_them(escapes):
    """Strings whose escapes straddle every 1 MiB window of the exact count, among values
    outside them: the count is what a character-by-character reading finds."""
    parts, size = [], 0
    while size < 3 * WINDOW:
        text = "y" * ((WINDOW - size) % 997 + 1) + escapes * 3
        parts.append([text, [], {"k": text}])
        size += len(json.dumps(parts[-1])) + 1
    body = json.dumps(parts).encode()
    exact = _outside_strings(body.decode())
    assert values_bound(body, exact) == exact
    assert values_bound(body, exact - 1) > exact - 1


def test_a_backslash_before_a_closing_quote_cannot_hide_values():
    """An escaped backslash ends its string: the values after it count, or a flood would pass."""
    body = b'["\\\\",' + b",".join([b"[]"] * 10_000) + b',"' + b"," * 20_000 + b'"]'
    assert values_bound(body, 5_000) > 5_000
    with pytest.raises(Malformed):
        decode_message(body)


def test_what_is_kept_of_a_large_message_is_made_before_another_is_decoded():
    """A class run reads many children from threads: a large message is decoded, and what the
    grader keeps of it made, while no other large message is decoded, so that one's values never
    lie beside another's decoding (a flood graded two at a time would otherwise pass 300 MiB)."""
    from grader import wire
    seen = []

    def keep(message):
        seen.append((len(message["text"]), wire._large.locked()))
        return len(message["text"])

    assert decode_message(bytearray(json.dumps({"text": "x" * (2 << 20)}).encode()), keep) == 2 << 20
    assert decode_message(bytearray(b'{"text": "small"}'), keep) == 5
    assert seen == [(2 << 20, True), (5, False)]
    assert not wire._large.locked()


@pytest.mark.parametrize("body, says", [(b"[1, 2]", "not a JSON object"), (b"{\"a\": ", "not JSON"),
                                        (b"[" * 100_000 + b"]" * 100_000, "not JSON"),
                                        (b"{\"a\":" * 5_000 + b"1" + b"}" * 5_000, "not JSON"),
                                        (b"\xff{}", "not JSON")])
def test_what_is_not_a_message_is_malformed(body, says):
    with pytest.raises(Malformed, match=says):
        decode_message(bytearray(body))
