"""Unions (FORMAT.md §10) beyond the conformance file: what the client
refuses (adding, set algebra), equality, the header, and the entry points
that read any `bloomfilter` (refresher and its change sets, psycopg
loaders)."""

import base64

import pytest

from pgbloomfilter import (BloomFilter, BloomFilterError, GrowingFilterError, Refresher,
                           UnionBloomFilter, UnionFilterError)
from pgbloomfilter import _format as F
from layered import (DOC, Source, check_equality_ignores_inserted, check_psycopg, check_refresher,
                     layer_offsets, values)

UNIONS = values("unions")
INTS = UNIONS["int8 keys: plain filters of 100 and 5000 keys"]       # keys 1..5100
FLAT = UNIONS["int8 keys: a growing filter (flattened into its layers) and a plain one"]
GROWN = base64.b64decode(DOC["growing"][0]["bytes"])


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
    b = check_equality_ignores_inserted(INTS, UnionBloomFilter, 7)
    b[-1] ^= 0x80
    assert BloomFilter(bytes(b)) != f
    # the layers of a growing filter as a union: another form, never equal
    g = BloomFilter(GROWN)
    gh = g.header
    u = BloomFilter(F.GrowHeader(gh.nlayers, 0, sum(x.capacity for x in g.layers), 0.5, 0.0,
                                 True).pack() + GROWN[64:])
    assert u.is_union and u != g and g != u and u.to_bytes()[64:] == GROWN[64:]


def test_the_growing_form_under_the_union_magic_is_refused():
    with pytest.raises(BloomFilterError):
        BloomFilter(b"BLMU" + GROWN[4:])                           # growth and ratio set
    with pytest.raises(BloomFilterError):
        BloomFilter(b"BLMG" + INTS[4:])                            # no chain, growth 0


def test_refresher_reads_unions_and_their_change_sets():
    check_refresher(INTS, UnionBloomFilter, range(1, 5101))
    # a table that becomes distributed: a full change set, plain to union
    src = Source(INTS[64:layer_offsets(INTS)[1]])
    r = Refresher(src)
    r.refresh()
    assert not r.filter.is_union
    src.sent, src.value = None, INTS
    r.refresh()
    assert r.filter.is_union and r.filter.to_bytes() == INTS


def test_psycopg_loaders_and_dumper():
    assert check_psycopg(INTS, UnionBloomFilter).startswith(b"bloomunion:1 capacity=5100 fpr=")
