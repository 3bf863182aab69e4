"""What the tests of growing filters (test_growing.py) and of unions
(test_union.py) share: the layered values (FORMAT.md §9, §10) of the
conformance file, their layers, and the checks of the entry points that
read any `bloomfilter` (refresher, psycopg loaders and dumper)."""

import base64
import copy
import json
import os
import pickle
import struct

import pytest

from pgbloomfilter import BloomFilter, Changes, GrowingBloomFilter, Refresher
from pgbloomfilter.patch import full_patch, make_patch

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "..", "..", "test", "conformance", "conformance.json"),
          encoding="utf-8") as fh:
    DOC = json.load(fh)


def values(section):
    """{name: bytes} of a section of the conformance file."""
    return {e["name"]: base64.b64decode(e["bytes"]) for e in DOC[section]}


def layer_offsets(raw):
    """Where each layer of a growing value or a union starts."""
    out, off = [], 64
    while off < len(raw):
        out.append(off)
        off += 64 + 64 * struct.unpack_from("<Q", raw, off + 24)[0]
    return out


def check_equality_ignores_inserted(raw, cls, inserted):
    """The value with every layer's inserted counter set to inserted equals
    raw's filter, and so do its copies (copy, deepcopy, pickle); returns
    that value, to be changed further."""
    f = BloomFilter(raw)
    b = bytearray(raw)
    for off in layer_offsets(raw):
        struct.pack_into("<Q", b, off + 32, inserted)
    assert BloomFilter(bytes(b)) == f
    for c in (f.copy(), copy.deepcopy(f), pickle.loads(pickle.dumps(f))):
        assert isinstance(c, cls) and c == f and c.to_bytes() == raw
    return b


class Source:
    """A change source serving a value, as a full and then an incremental
    change set."""

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


def check_refresher(raw, cls, keys):
    """A Refresher reads raw with block 0 of each layer cleared whole, then
    raw as a patch of those bits, and answers for every key."""
    b = bytearray(raw)
    for off in layer_offsets(raw):
        b[off + 64:off + 128] = bytes(64)                          # block 0 of each layer cleared
    src = Source(bytes(b))
    r = Refresher(src)
    r.refresh()
    assert isinstance(r.filter, cls) and r.filter.to_bytes() == bytes(b)
    src.value = raw                                                # a patch of the bits
    r.refresh()
    assert r.filter.to_bytes() == raw and r.status().full_refreshes == 1
    assert all(r.contains(k) for k in keys)


def check_psycopg(raw, cls):
    """psycopg's loaders read raw's bytes and text form as cls, its dumper
    writes the bytes; returns the text form."""
    pytest.importorskip("psycopg")
    from pgbloomfilter import adapt
    text = BloomFilter(raw).to_text().encode("ascii")
    for loader, data in ((adapt.BloomFilterBinaryLoader, memoryview(raw)),
                         (adapt.BloomFilterLoader, memoryview(text))):
        f = loader(0).load(data)
        assert isinstance(f, cls) and f.to_bytes() == raw
    assert adapt.BloomFilterBinaryDumper(GrowingBloomFilter).dump(BloomFilter(raw)) == raw
    return text
