"""Growing filters (FORMAT.md §9) beyond the conformance file: what the
client refuses (adding, set algebra), equality, introspection, and the
entry points that read any `bloomfilter` (refresher, psycopg loaders)."""

import base64
import copy
import json
import os
import pickle
import struct

import pytest

from pgbloomfilter import (BloomFilter, BloomFilterError, BloomWindow, Changes,
                           FamilyMismatchError, FormatError, GrowingBloomFilter,
                           GrowingFilterError, LayerInfo, Refresher)
from pgbloomfilter import _format as F
from pgbloomfilter.patch import full_patch, make_patch

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "..", "..", "test", "conformance", "conformance.json"),
          encoding="utf-8") as fh:
    _DOC = json.load(fh)
GROWING = {g["name"]: base64.b64decode(g["bytes"]) for g in _DOC["growing"]}
INTS = GROWING["int8 keys, capacity 20, growth 2: 1000 keys in 6 layers"]   # keys 1..1000
EMPTY = GROWING["empty growing filter"]


def layer_offsets(raw):
    """Where each layer of a growing value starts."""
    out, off = [], 64
    while off < len(raw):
        out.append(off)
        off += 64 + 64 * struct.unpack_from("<Q", raw, off + 24)[0]
    return out


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
    b = bytearray(INTS)
    for off in layer_offsets(INTS):
        struct.pack_into("<Q", b, off + 32, 12345)
    assert BloomFilter(bytes(b)) == f
    last = layer_offsets(INTS)[-1]
    b[last + 64] ^= 1                                            # a bit of the last layer
    assert BloomFilter(bytes(b)) != f
    # never equal to a plain filter, even one with the same bits
    one = GROWING["one layer, not yet grown"]
    g, plain = BloomFilter(one), BloomFilter(one[64:])
    assert g != plain and plain != g and not g == plain
    assert f != 1 and f.__eq__(1) is NotImplemented
    for c in (f.copy(), copy.deepcopy(f), pickle.loads(pickle.dumps(f))):
        assert isinstance(c, GrowingBloomFilter) and c == f and c.to_bytes() == INTS


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


class Source:
    """A change source serving a growing value, as a full and then an
    incremental change set."""

    def __init__(self, value):
        self.value = value
        self.sent = None

    def changes(self, since):
        old, self.sent = self.sent, self.value
        if since is None or old is None:
            return Changes("1", True, full_patch(self.value))
        runs = [(i, self.value[i:i + 1]) for i in range(len(old)) if old[i] != self.value[i]]
        return Changes("2", False, make_patch(runs, len(self.value)))

    def close(self):
        pass


def test_refresher_reads_growing_filters():
    b = bytearray(INTS)
    for off in layer_offsets(INTS):
        b[off + 64:off + 128] = bytes(64)                        # block 0 of each layer cleared
    src = Source(bytes(b))
    r = Refresher(src)
    r.refresh()
    assert isinstance(r.filter, GrowingBloomFilter) and r.filter.to_bytes() == bytes(b)
    src.value = INTS                                             # the bits come back
    r.refresh()
    assert r.filter.to_bytes() == INTS and r.status().full_refreshes == 1
    assert all(r.contains(k) for k in range(1, 1001))


def test_psycopg_loaders_and_dumper():
    pytest.importorskip("psycopg")
    from pgbloomfilter import adapt
    text = BloomFilter(INTS).to_text().encode("ascii")
    for loader, data in ((adapt.BloomFilterBinaryLoader, memoryview(INTS)),
                         (adapt.BloomFilterLoader, memoryview(text))):
        f = loader(0).load(data)
        assert isinstance(f, GrowingBloomFilter) and f.to_bytes() == INTS
    assert adapt.BloomFilterBinaryDumper(GrowingBloomFilter).dump(BloomFilter(INTS)) == INTS
