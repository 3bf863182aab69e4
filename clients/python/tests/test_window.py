"""BloomWindow beyond the conformance file: adds replayed against the
server's bytes, the time boundaries of FORMAT.md §7.3, times before 2000."""

import base64
import datetime
import json
import os
import struct

import pytest

from pgbloomfilter import BloomWindow, FormatError

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "..", "..", "test", "conformance", "conformance.json"),
          encoding="utf-8") as fh:
    WINDOWS = {w["name"]: w for w in json.load(fh)["windows"]}

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(2000, 1, 1, tzinfo=UTC)
T0 = datetime.datetime(2026, 1, 5, tzinfo=UTC)      # generate.py's T0
MIN = 60 * 1000000
HOUR = 60 * MIN


def emptied(raw):
    """The window of the same parameters before anything was added."""
    b = bytearray(raw)
    n = struct.unpack_from("<H", b, 6)[0]
    struct.pack_into("<qQ", b, 16, -(1 << 63), 0)        # newest none, ignored 0
    size = (len(b) - 64) // (n + 1)
    for j in range(n + 1):
        o = 64 + j * size
        b[o + 8] = 0                                     # family none
        b[o + 9] = 0
        struct.pack_into("<I", b, o + 12, 0)
        struct.pack_into("<Q", b, o + 32, 0)             # inserted
        b[o + 64:o + size] = bytes(size - 64)
    return BloomWindow(bytes(b))


def test_adds_give_the_servers_bytes():
    entry = WINDOWS["4 hours in 4 slices, int8 keys, spread over the window"]
    w = emptied(base64.b64decode(entry["bytes"]))
    for k in range(1, 41):
        w.add(k, T0 + datetime.timedelta(minutes=7 * k))
    assert w.to_bytes() == base64.b64decode(entry["bytes"])


def test_late_adds_are_ignored_and_counted():
    entry = WINDOWS["7 days in 7 slices, text keys, an idle gap and an ignored add"]
    w = emptied(base64.b64decode(entry["bytes"]))
    for k in range(1, 21):
        w.add("seen-%d" % k, T0 + datetime.timedelta(hours=5 * k))
    w.add("late", T0 + datetime.timedelta(days=100))
    assert w.add("too-old", T0 + datetime.timedelta(days=1)) is False
    assert w.info().ignored == 1
    assert w.to_bytes() == base64.b64decode(entry["bytes"])


def test_kept_for_the_window_gone_after_a_slice_more():
    # W = 4 h in 4 slices of S = 1 h: a key added at t is found until
    # t + W (excluded) and gone from t + W + S on
    w = emptied(base64.b64decode(WINDOWS["4 hours in 4 slices, int8 keys, spread over the window"]["bytes"]))
    t = (T0 - EPOCH) // datetime.timedelta(microseconds=1) + 25 * MIN
    w.add(123456789, t)
    for dt in (0, 1, HOUR, 4 * HOUR - 1):
        assert w.contains(123456789, t + dt), dt
    assert not w.contains(123456789, t + 4 * HOUR + HOUR)
    assert not w.contains(123456789, t + 30 * 24 * HOUR)
    assert not w.contains(123456789, t - HOUR)           # an earlier slice


def test_times_before_2000_use_floor_division():
    w = emptied(base64.b64decode(WINDOWS["1 minute in 1 slice, times before 2000"]["bytes"]))
    w.add(7, -1)                  # slice -1: [-60 s, 0)
    assert w.info().newest_slice == -1
    assert w.contains(7, -MIN) and w.contains(7, -1) and w.contains(7, MIN - 1)
    assert not w.contains(7, MIN)             # slice 1: slices 0 and 1 only
    assert [s.start_us for s in w.slices()] == [-2 * MIN, -MIN]


def test_times():
    w = BloomWindow(base64.b64decode(WINDOWS["empty window"]["bytes"]))
    assert w.contains(1, T0) is False
    with pytest.raises(ValueError):
        w.contains(1, datetime.datetime(2026, 1, 5))     # naive: no instant
    with pytest.raises(TypeError):
        w.contains(1, True)
    with pytest.raises(TypeError):
        w.contains(1, 1.5)


def test_text_form_is_canonical():
    entry = WINDOWS["empty window"]
    with pytest.raises(FormatError):
        BloomWindow.from_text(entry["text"].replace("ignored=0", "ignored=00"))
    with pytest.raises(FormatError):
        BloomWindow.from_text(entry["text"].replace("bloomwindow:1", "bloomwindow:2"))
    assert BloomWindow.from_text(entry["text"]).to_text() == entry["text"]
