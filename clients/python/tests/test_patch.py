"""Applying change sets (API-CONTRACTS §1) to a local copy."""

import struct

import pytest

from pgbloomfilter import BloomFilter, PatchError, apply_patch
from pgbloomfilter.patch import full_patch, make_patch


def value(nblocks=4):
    f = BloomFilter.create_sized(512 * nblocks, 3, 7)
    for i in range(50):
        f.add(i)
    return f.to_bytes()


def test_full_patch_replaces_everything():
    v = value()
    assert apply_patch(None, full_patch(v)) == v
    assert apply_patch(b"x" * 10, full_patch(v)) == v


def test_full_patch_with_gaps_starts_from_zeros():
    p = make_patch([(2, b"ab"), (8, b"c")], 10, full=True)
    assert apply_patch(None, p) == b"\0\0ab\0\0\0\0c\0"


def test_incremental_runs_are_copied_in_place():
    old = bytes(range(16))
    p = make_patch([(0, b"\xff"), (4, b"\xaa\xbb"), (15, b"\xee")], 16)
    new = apply_patch(old, p)
    assert new == b"\xff\x01\x02\x03\xaa\xbb" + bytes(range(6, 15)) + b"\xee"
    assert old == bytes(range(16))          # the old copy is untouched


def test_adjacent_and_empty_runs():
    p = make_patch([(0, b"ab"), (2, b"cd"), (4, b"")], 4)
    assert apply_patch(b"0000", p) == b"abcd"


def test_no_runs_is_no_change():
    assert apply_patch(b"abcd", make_patch([], 4)) == b"abcd"


def test_a_real_filter_round_trip():
    old = value()
    f = BloomFilter(old)
    f.add(1000)
    f.add(1001)
    new = f.to_bytes()
    runs = []
    i = 0
    while i < len(new):                     # the differing 64-byte pages
        if old[i:i + 64] != new[i:i + 64]:
            runs.append((i, new[i:i + 64]))
        i += 64
    got = apply_patch(old, make_patch(runs, len(new)))
    assert got == new
    assert BloomFilter(got).contains(1000)


@pytest.mark.parametrize("patch, old, why", [
    (b"", b"abcd", "short"),
    (make_patch([], 4)[:23], b"abcd", "short header"),
    (b"BLMF" + make_patch([], 4)[4:], b"abcd", "magic"),
    (make_patch([], 4)[:4] + struct.pack("<H", 2) + make_patch([], 4)[6:], b"abcd", "version"),
    (make_patch([], 4)[:6] + b"\x02" + make_patch([], 4)[7:], b"abcd", "flag bit 1"),
    (make_patch([], 4)[:7] + b"\x01" + make_patch([], 4)[8:], b"abcd", "reserved byte"),
    (make_patch([], 4)[:20] + b"\x01\0\0\0", b"abcd", "reserved u32"),
    (make_patch([], 5), b"abcd", "length differs"),
    (make_patch([], 4), None, "incremental without a copy"),
    (make_patch([(3, b"xy")], 4), b"abcd", "run past the end"),
    (make_patch([(2, b"x"), (1, b"y")], 4), b"abcd", "out of order"),
    (make_patch([(0, b"xy"), (1, b"z")], 4), b"abcd", "overlapping"),
    (make_patch([(0, b"xy")], 4)[:-1], b"abcd", "truncated run"),
    (make_patch([(0, b"xy")], 4)[:30], b"abcd", "truncated run header"),
    (make_patch([(0, b"xy")], 4) + b"\0", b"abcd", "trailing bytes"),
    (make_patch([(0, b"xy")], 4)[:32] + b"\x01\0\0\0" + make_patch([(0, b"xy")], 4)[36:],
     b"abcd", "run reserved"),
    (make_patch([], 1 << 40, full=True), None, "absurd total"),
    (make_patch([(0, b"ab")], 2)[:8] + struct.pack("<Q", 2) + struct.pack("<I", 2)
     + make_patch([(0, b"ab")], 2)[20:], b"ab", "more runs than present"),
])
def test_rejected(patch, old, why):
    with pytest.raises(PatchError):
        apply_patch(old, patch)
