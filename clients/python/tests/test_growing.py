"""Growing filters (FORMAT.md §9) beyond the conformance file: what the
client refuses (adding, set algebra), equality, introspection, and the
entry points that read any `bloomfilter` (refresher, psycopg loaders)."""

import struct

import pytest

from pgbloomfilter import (BloomFilter, BloomFilterError, BloomWindow, FamilyMismatchError,
                           FormatError, GrowingBloomFilter, GrowingFilterError, LayerInfo)
from pgbloomfilter import _format as F
from layered import (check_equality_ignores_inserted, check_psycopg, check_refresher, layer_offsets,
                     values)

GROWING = values("growing")
INTS = GROWING["int8 keys, capacity 20, growth 2: 1000 keys in 6 layers"]   # keys 1..1000
EMPTY = GROWING["empty growing filter"]


def test_reads_as_a_bloomfilter_and_answers_for_every_layer():
    f = BloomFilter(INTS)
    assert isinstance(f, BloomFilter) and isinstance(f, GrowingBloomFilter) and f.is_growing
    assert all(k in f for k in range(1, 1001))              # members of every layer
    assert all(f.contains(str(k), "int4") for k in range(1, 1001, 97))
    assert f.family == "integer" and f.seed == 11 and f.nhashes is None
    assert f.hash(5) == BloomFilter.create_sized(512, 1, 11).hash(5)
    with pytest.raises(FamilyMismatchError):
        f.contains("1")
    assert "GrowingBloomFilter" in repr(f) and "layers=6" in repr(f)
    assert not BloomFilter(EMPTY).contains(1) and "x" not in BloomFilter(EMPTY)


def test_layers_and_header():
    f = BloomFilter(INTS)
    h = f.header
    assert (h.nlayers, h.growth, h.capacity, h.fpr, h.ratio) == (6, 2, 20, 0.01, 0.9)
    layers = f.layers
    assert [x.layer for x in layers] == list(range(6))
    assert [x.capacity for x in layers] == [20 * 2 ** i for i in range(6)]
    p = 0.01 * (1 - 0.9)
    for x in layers:
        assert x.target_fpr == p and x.nbits % 512 == 0 and 1 <= x.nhashes <= 64
        p *= 0.9
    assert sum(x.inserted for x in layers) == f.inserted == 1000
    assert f.nbits == sum(x.nbits for x in layers) == f.info().nbits
    assert f.info().capacity == sum(x.capacity for x in layers)
    assert f.info().target_fpr == 0.01
    # a plain filter is its own only layer
    g = BloomFilter.create_sized(1024, 3, 7)
    g.add(1)
    assert not g.is_growing
    assert g.layers == [LayerInfo(0, 1024, 3, 0, 0.0, 1)]


def test_add_is_refused_and_changes_nothing():
    f = BloomFilter(INTS)
    for key in (1, 5000, "x"):
        with pytest.raises(GrowingFilterError) as e:
            f.add(key)
        assert isinstance(e.value, BloomFilterError) and e.value.sqlstate == "0A000"
        assert "on the server" in str(e.value)
    assert f.to_bytes() == INTS
    with pytest.raises(GrowingFilterError):
        BloomFilter(EMPTY).add(1)


def test_set_algebra_is_refused():
    f = BloomFilter(INTS)
    plain = BloomFilter(INTS[64:layer_offsets(INTS)[1]])        # its layer 0, as a plain filter
    assert not plain.is_growing and all(k in plain for k in range(1, 21))
    for a, b in ((f, f), (f, plain), (plain, f)):
        for op in (a.union, a.intersection, a.__or__, a.__and__):
            with pytest.raises(GrowingFilterError) as e:
                op(b)
            assert e.value.sqlstate == "0A000"
    assert f.to_bytes() == INTS


def test_equality_ignores_only_the_layers_inserted():
    f = BloomFilter(INTS)
    b = check_equality_ignores_inserted(INTS, GrowingBloomFilter, 12345)
    last = layer_offsets(INTS)[-1]
    b[last + 64] ^= 1                                            # a bit of the last layer
    assert BloomFilter(bytes(b)) != f
    # never equal to a plain filter, even one with the same bits
    one = GROWING["one layer, not yet grown"]
    g, plain = BloomFilter(one), BloomFilter(one[64:])
    assert g != plain and plain != g and not g == plain
    assert f != 1 and f.__eq__(1) is NotImplemented


def test_cardinality_and_fpr_sum_the_layers():
    f = BloomFilter(INTS)
    parts = [BloomFilter(INTS[a:b]) for a, b in
             zip(layer_offsets(INTS), layer_offsets(INTS)[1:] + [len(INTS)])]
    assert f.cardinality() == pytest.approx(sum(p.cardinality() for p in parts))
    miss = 1.0
    for p in parts:
        miss *= 1.0 - p.fpr()
    assert f.fpr() == pytest.approx(1.0 - miss)
    assert f.info().bits_set == sum(p.info().bits_set for p in parts)


def test_plain_only_entry_points_refuse_the_growing_form():
    with pytest.raises(FormatError):
        GrowingBloomFilter(BloomFilter.create_sized(512, 3).to_bytes())
    # a window's slot is a plain filter: a valid growing value there (its
    # fpr a subnormal whose bits read as the slot's nblocks, 3) is refused
    p = struct.unpack("<d", struct.pack("<Q", 3))[0]
    layer = F.Header(F.NONE, 0, 1, 0, 0, 2, 0, 5, p * (1 - 0.5)).pack() + bytes(128)
    slot = F.GrowHeader(1, 2, 5, p, 0.5).pack() + layer
    assert BloomFilter(slot).is_growing and len(slot) == 64 + 64 * 3
    w = struct.pack("<4sHHqqQqd16s", b"BLMW", 1, 1, 60_000_000, -(1 << 63), 0, 5, 2 * p,
                    bytes(16)) + slot + slot
    with pytest.raises(FormatError, match="magic"):
        BloomWindow(w)


def test_refresher_reads_growing_filters():
    check_refresher(INTS, GrowingBloomFilter, range(1, 1001))


def test_psycopg_loaders_and_dumper():
    check_psycopg(INTS, GrowingBloomFilter)
