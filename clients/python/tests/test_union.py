"""Unions (FORMAT.md §10) beyond the conformance file: what the client
refuses (adding, set algebra), equality, the header, and the entry points
that read any `bloomfilter` (refresher and its change sets, psycopg
loaders)."""

import base64
import copy
import json
import os
import pickle
import struct

import pytest

from pgbloomfilter import (BloomFilter, BloomFilterError, GrowingBloomFilter, GrowingFilterError,
                           Refresher, UnionBloomFilter, UnionFilterError)
from pgbloomfilter import _format as F
from test_growing import Source, layer_offsets

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "..", "..", "test", "conformance", "conformance.json"),
          encoding="utf-8") as fh:
    _DOC = json.load(fh)
UNIONS = {u["name"]: base64.b64decode(u["bytes"]) for u in _DOC["unions"]}
INTS = UNIONS["int8 keys: plain filters of 100 and 5000 keys"]       # keys 1..5100
FLAT = UNIONS["int8 keys: a growing filter (flattened into its layers) and a plain one"]
GROWN = base64.b64decode(_DOC["growing"][0]["bytes"])


def test_reads_as_a_bloomfilter_and_answers_for_every_layer():
    f = BloomFilter(INTS)
    assert isinstance(f, UnionBloomFilter) and f.is_union and not f.is_growing
    assert all(k in f for k in range(1, 5101))
    assert f.family == "integer" and f.seed == 7 and f.nhashes is None
    h = f.header
    assert (h.nlayers, h.growth, h.capacity, h.ratio, h.union) == (2, 0, 5100, 0.0, True)
    assert [x.capacity for x in f.layers] == [100, 5000] and f.info().capacity == 5100
    assert f.info().target_fpr == h.fpr == 1 - (1 - 0.01) * (1 - 0.001)
    assert "UnionBloomFilter" in repr(f) and "layers=2" in repr(f)
    # a growing input is flattened: its layers, then the plain filter's
    assert len(BloomFilter(FLAT).layers) == 5 and all(k in BloomFilter(FLAT) for k in range(1, 301))


def test_add_and_set_algebra_are_refused():
    f = BloomFilter(INTS)
    plain = BloomFilter(INTS[64:layer_offsets(INTS)[1]])           # layer 0 alone
    for key in (1, 99999):
        with pytest.raises(UnionFilterError) as e:
            f.add(key)
        assert isinstance(e.value, BloomFilterError) and e.value.sqlstate == "0A000"
        assert not isinstance(e.value, GrowingFilterError) and "read-only" in str(e.value)
    grown = BloomFilter(GROWN)
    for a, b in ((f, f), (f, plain), (plain, f), (f, grown), (grown, f)):
        for op in (a.union, a.intersection, a.__or__, a.__and__):
            with pytest.raises(UnionFilterError):
                op(b)
    assert f.to_bytes() == INTS


def test_equality_ignores_only_the_layers_inserted():
    f = BloomFilter(INTS)
    b = bytearray(INTS)
    for off in layer_offsets(INTS):
        struct.pack_into("<Q", b, off + 32, 7)
    assert BloomFilter(bytes(b)) == f
    b[-1] ^= 0x80
    assert BloomFilter(bytes(b)) != f
    # the layers of a growing filter as a union: another form, never equal
    g = BloomFilter(GROWN)
    gh = g.header
    u = BloomFilter(F.GrowHeader(gh.nlayers, 0, sum(x.capacity for x in g.layers), 0.5, 0.0,
                                 True).pack() + GROWN[64:])
    assert u.is_union and u != g and g != u and u.to_bytes()[64:] == GROWN[64:]
    for c in (f.copy(), copy.deepcopy(f), pickle.loads(pickle.dumps(f))):
        assert isinstance(c, UnionBloomFilter) and c == f and c.to_bytes() == INTS


def test_the_growing_form_under_the_union_magic_is_refused():
    with pytest.raises(BloomFilterError):
        BloomFilter(b"BLMU" + GROWN[4:])                           # growth and ratio set
    with pytest.raises(BloomFilterError):
        BloomFilter(b"BLMG" + INTS[4:])                            # no chain, growth 0


def test_refresher_reads_unions_and_their_change_sets():
    b = bytearray(INTS)
    for off in layer_offsets(INTS):
        b[off + 64:off + 128] = bytes(64)                          # block 0 of each layer cleared
    src = Source(bytes(b))
    r = Refresher(src)
    r.refresh()
    assert isinstance(r.filter, UnionBloomFilter) and r.filter.to_bytes() == bytes(b)
    src.value = INTS                                               # a patch of the bits
    r.refresh()
    assert r.filter.to_bytes() == INTS and r.status().full_refreshes == 1
    assert all(r.contains(k) for k in range(1, 5101))
    # a table that becomes distributed: a full change set, plain to union
    src = Source(INTS[64:layer_offsets(INTS)[1]])
    r = Refresher(src)
    r.refresh()
    assert not r.filter.is_union
    src.sent, src.value = None, INTS
    r.refresh()
    assert r.filter.is_union and r.filter.to_bytes() == INTS


def test_psycopg_loaders_and_dumper():
    pytest.importorskip("psycopg")
    from pgbloomfilter import adapt
    text = BloomFilter(INTS).to_text().encode("ascii")
    assert text.startswith(b"bloomunion:1 capacity=5100 fpr=")
    for loader, data in ((adapt.BloomFilterBinaryLoader, memoryview(INTS)),
                         (adapt.BloomFilterLoader, memoryview(text))):
        f = loader(0).load(data)
        assert isinstance(f, UnionBloomFilter) and f.to_bytes() == INTS
    assert adapt.BloomFilterBinaryDumper(GrowingBloomFilter).dump(BloomFilter(INTS)) == INTS
