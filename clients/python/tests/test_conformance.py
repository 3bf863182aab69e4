"""The client against test/conformance/conformance.json: every answer the
server gave there, given again by pgbloomfilter."""

import base64
import datetime
import decimal
import json
import os
import re
import struct
import uuid

import pytest

from pgbloomfilter import (BloomFilter, BloomFilterError, BloomWindow, FamilyMismatchError,
                           FormatError, GrowingBloomFilter, IncompatibleFiltersError,
                           NonPortableError, TextFormatError, UnionBloomFilter,
                           UnionFilterError)

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = os.environ.get("BF_CONFORMANCE") or os.path.join(
    HERE, "..", "..", "..", "test", "conformance", "conformance.json")

with open(PATH, encoding="utf-8") as fh:
    DOC = json.load(fh)
TYPES = DOC["types"]
EPOCH = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)


def typed(key):
    """(value, type) with the value as the server printed it."""
    if key["type"] == "record":
        return (tuple(f["value"] for f in key["fields"]),
                tuple(typed_name(f["type"]) for f in key["fields"]))
    return key["value"], typed_name(key["type"])


def typed_name(t):
    return "enum" if TYPES.get(t) == "enum" else t     # the enum's own name is unknown here


_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)(?: (\d\d):(\d\d):(\d\d)(?:\.(\d+))?)?(\+00)?\Z")


class NoNative(Exception):
    pass


def native(key):
    """The Python value an application holds for the key (as psycopg loads
    it), or NoNative when Python's types cannot hold it."""
    t, v = key["type"], key.get("value")
    if t == "record":
        return tuple(native(f) for f in key["fields"])
    if v is None:
        return None
    fam = TYPES[t]
    if fam == "integer":
        return int(v)
    if fam == "float":
        x = float(v)
        if t == "float4":                # psycopg's binary float4, widened
            x = struct.unpack("<f", struct.pack("<f", x))[0]
        return x
    if fam == "numeric":
        return decimal.Decimal(v)
    if fam in ("text", "enum"):
        if t == "bpchar":
            raise NoNative()             # needs the type: the padding goes
        return v
    if fam == "bytea":
        return bytes.fromhex(v[2:])
    if fam == "uuid":
        return uuid.UUID(v)
    if fam == "boolean":
        return v == "t"
    m = _ISO.match(v)
    if not m or m.group(1) == "0000":
        raise NoNative()                 # infinity, BC, years past 9999
    y, mo, d, hh, mi, ss, frac, tz = m.groups()
    if fam == "date":
        return datetime.date(int(y), int(mo), int(d))
    dt = datetime.datetime(int(y), int(mo), int(d), int(hh), int(mi), int(ss),
                           int((frac or "").ljust(6, "0")))
    if fam == "timestamptz":
        dt = dt.replace(tzinfo=datetime.timezone.utc)
    return dt


def both(key):
    """The ways to give the key: as printed with its type, and native."""
    out = [typed(key)]
    try:
        out.append((native(key), None))
    except NoNative:
        pass
    return out


def test_file_is_format_1():
    assert DOC["format"] == 1
    assert DOC["hashes"] and DOC["filters"] and DOC["malformed_bytes"] and DOC["malformed_text"]
    assert DOC["growing"] and DOC["malformed_growing"]
    assert DOC["unions"] and DOC["malformed_unions"]


@pytest.mark.parametrize("seed", sorted({int(h["seed"]) for h in DOC["hashes"]}))
def test_hashes(seed):
    f = BloomFilter.create_sized(512, 1, seed)
    n = 0
    for h in DOC["hashes"]:
        if int(h["seed"]) != seed:
            continue
        for value, typ in both(h["key"]):
            if typ is None and isinstance(value, tuple) and (
                    None in value or "enum" in (TYPES[x["type"]] for x in h["key"]["fields"])):
                continue        # no filter family to tell a None field's or a label's type
            assert f.hash(value, typ) == int(h["hash"]), (h, value, typ)
            n += 1
    assert n > 100


FILTERS = DOC["filters"]


@pytest.mark.parametrize("entry", FILTERS, ids=[f["name"] for f in FILTERS])
def test_filter(entry):
    raw = base64.b64decode(entry["bytes"])
    f = BloomFilter(raw)
    t = BloomFilter.from_text(entry["text"])
    assert t.to_bytes() == raw
    assert f.to_text() == entry["text"]
    assert f == t
    for p in entry["probes"]:
        for value, typ in both(p["key"]):
            assert f.contains(value, typ) is p["expect"], (p, value, typ)
    for e in entry.get("errors", []):
        # (a label held as a Python str is text: only its typed form is refused)
        for value, typ in both(e["key"])[:1 if TYPES.get(e["key"]["type"]) == "enum" else 2]:
            with pytest.raises(FamilyMismatchError):
                f.contains(value, typ)
    check_info(f, entry["info"])


def check_info(f, want):
    """bf_fpr, bf_cardinality, bf_info's saturated and bits_set."""
    info = f.info()
    assert info.estimated_fpr == pytest.approx(float(want["fpr"]), rel=1e-9, abs=0)
    assert info.bits_set == want["bits_set"]
    assert info.saturated is want["saturated"]
    card = float(want["cardinality"])
    assert info.estimated_cardinality == pytest.approx(card, rel=1e-9, abs=0) or \
        info.estimated_cardinality == card
    assert f.fpr() == info.estimated_fpr
    assert f.cardinality() == info.estimated_cardinality


@pytest.mark.parametrize("entry", DOC["setops"], ids=[s["name"] for s in DOC["setops"]])
def test_setops(entry):
    a = BloomFilter(base64.b64decode(entry["left"]))
    b = BloomFilter(base64.b64decode(entry["right"]))
    op = a.union if entry["op"] == "union" else a.intersection
    if "sqlstate" in entry:
        with pytest.raises(IncompatibleFiltersError):
            op(b)
    else:
        assert op(b).to_bytes() == base64.b64decode(entry["result"])


@pytest.mark.parametrize("entry", DOC["nonportable_filters"],
                         ids=[m["name"] for m in DOC["nonportable_filters"]])
def test_nonportable(entry):
    f = BloomFilter(base64.b64decode(entry["bytes"]))
    assert not f.info().portable
    with pytest.raises(NonPortableError):
        f.contains(1)
    with pytest.raises(NonPortableError):
        f.contains((1, "10.0.0.1"))
    try:        # a record's text names only field families: it reads back
        t = BloomFilter.from_text(entry["text"])
        assert t == f
    except NonPortableError:
        assert "family=other(" in entry["text"]
    assert f.union(f).to_bytes()[64:] == f.to_bytes()[64:]


@pytest.mark.parametrize("entry", DOC["malformed_bytes"],
                         ids=[m["name"] for m in DOC["malformed_bytes"]])
def test_malformed_bytes(entry):
    with pytest.raises(FormatError):
        BloomFilter(base64.b64decode(entry["bytes"]))


@pytest.mark.parametrize("entry", DOC["malformed_text"],
                         ids=[m["name"] for m in DOC["malformed_text"]])
def test_malformed_text(entry):
    with pytest.raises(BloomFilterError) as e:
        BloomFilter.from_text(entry["text"])
    if entry["sqlstate"] == "22P02":
        assert e.value.sqlstate in ("22P02", "0A000")


GROWING = DOC["growing"]
UNIONS = DOC["unions"]


@pytest.mark.parametrize("entry", GROWING, ids=[g["name"] for g in GROWING])
def test_growing(entry):
    check_layered(entry, GrowingBloomFilter)


@pytest.mark.parametrize("entry", UNIONS, ids=[u["name"] for u in UNIONS])
def test_union(entry):
    f = check_layered(entry, UnionBloomFilter)
    with pytest.raises(UnionFilterError) as e:         # read-only (§10.2)
        f.add(1)
    assert e.value.sqlstate == "0A000" and f.to_bytes() == base64.b64decode(entry["bytes"])


def check_layered(entry, cls):
    """An entry of growing or unions: read as a value of class cls from its
    bytes and its text, printed back, its probes and estimates the server's."""
    raw = base64.b64decode(entry["bytes"])
    f = BloomFilter(raw)
    t = BloomFilter.from_text(entry["text"])
    for g in (f, t, BloomFilter.from_bytes(memoryview(raw))):
        assert type(g) is cls and isinstance(g, BloomFilter)
        assert g.is_growing is (cls is GrowingBloomFilter)
        assert g.is_union is (cls is UnionBloomFilter)
        assert g.to_bytes() == raw and bytes(g) == raw
        assert g.to_text() == entry["text"]
        assert len(g.layers) == entry["layers"] == g.header.nlayers
        assert g == f
    for p in entry["probes"]:
        for value, typ in both(p["key"]):
            assert f.contains(value, typ) is p["expect"], (p, value, typ)
    check_info(f, entry["info"])
    assert f.info().nhashes is None and f.info().nbits == sum(x.nbits for x in f.layers)
    assert f != BloomFilter(raw[64:64 + 64 + 64 * f.layers[0].nbits // 512])   # layer 0 alone
    return f


MALFORMED_LAYERED = DOC["malformed_growing"] + DOC["malformed_unions"]


@pytest.mark.parametrize("entry", MALFORMED_LAYERED,
                         ids=[m["name"] for m in MALFORMED_LAYERED])
def test_malformed_layered(entry):
    with pytest.raises(FormatError) as e:
        BloomFilter(base64.b64decode(entry["bytes"]))
    assert e.value.sqlstate == entry["sqlstate"]


def _growing_text_variants():
    """Texts the server's input refuses (22P02), made from the conformance
    file's growing filters: other spellings, wrong header fields, layers
    that break a rule of §9.1."""
    g = [e["text"] for e in GROWING]
    t = g[0]                    # several layers, capacity=20 fpr=0.01 ratio=0.9 growth=2
    head, *layers = t.split(" layer=")
    out = [
        ("version 2", t.replace("bloomgrowing:1", "bloomgrowing:2", 1)),
        ("no layers", head),
        ("a trailing space", t + " "),
        ("an empty layer", t + " layer="),
        ("capacity 020", t.replace("capacity=20 ", "capacity=020 ", 1)),
        ("capacity +20", t.replace("capacity=20 ", "capacity=+20 ", 1)),
        ("capacity 21", t.replace("capacity=20 ", "capacity=21 ", 1)),
        ("capacity 0", t.replace("capacity=20 ", "capacity=0 ", 1)),
        ("fpr 1e-2", t.replace("fpr=0.01 ", "fpr=1e-2 ", 1)),
        ("fpr 0.010", t.replace("fpr=0.01 ", "fpr=0.010 ", 1)),
        ("fpr 0.02", t.replace("fpr=0.01 ", "fpr=0.02 ", 1)),
        ("fpr nan", t.replace("fpr=0.01 ", "fpr=nan ", 1)),
        ("ratio 0.90", t.replace("ratio=0.9 ", "ratio=0.90 ", 1)),
        ("ratio 0.8", t.replace("ratio=0.9 ", "ratio=0.8 ", 1)),
        ("ratio 1", t.replace("ratio=0.9 ", "ratio=1 ", 1)),
        ("growth 3", t.replace("growth=2 ", "growth=3 ", 1)),
        ("growth 1", t.replace("growth=2 ", "growth=1 ", 1)),
        ("growth 02", t.replace("growth=2 ", "growth=02 ", 1)),
        ("growth 4294967298", t.replace("growth=2 ", "growth=4294967298 ", 1)),
        ("fields out of order", t.replace("fpr=0.01 ratio=0.9", "ratio=0.9 fpr=0.01", 1)),
        ("two spaces", t.replace(" layer=", "  layer=", 1)),
        ("a layer missing", " layer=".join([head] + layers[:1] + layers[2:])),
        ("layers swapped", " layer=".join([head, layers[1], layers[0]] + layers[2:])),
        ("a layer twice", " layer=".join([head] + layers[:1] + layers)),
        ("a layer of another filter", " layer=".join(
            [head, g[2].split(" layer=")[1]] + layers[1:])),
        ("a layer's bits= cut short", t[:-4]),
        ("a plain filter's text as a layer's", " layer=".join(
            [head, DOC["filters"][0]["text"]] + layers[1:])),
        ("%d layers" % (len(layers) * 11), " layer=".join([head] + layers * 11)),
    ]
    return out


def _union_text_variants():
    """The same of the file's unions (§10.4)."""
    t = UNIONS[0]["text"]       # int8 keys: two layers, capacity=5100
    head, *layers = t.split(" layer=")
    fpr = head.split(" ")[2]
    out = [
        ("union version 2", t.replace("bloomunion:1", "bloomunion:2", 1)),
        ("union without layers", head),
        ("union with a trailing space", t + " "),
        ("union capacity 05100", t.replace("capacity=5100 ", "capacity=05100 ", 1)),
        ("union capacity 5101", t.replace("capacity=5100 ", "capacity=5101 ", 1)),
        ("union capacity -1", t.replace("capacity=5100 ", "capacity=-1 ", 1)),
        ("union fpr with a trailing 0", t.replace(fpr + " ", fpr + "0 ", 1)),
        ("union fpr 2", t.replace(fpr + " ", "fpr=2 ", 1)),
        ("union fpr -0.5", t.replace(fpr + " ", "fpr=-0.5 ", 1)),
        ("union fpr nan", t.replace(fpr + " ", "fpr=nan ", 1)),
        ("union with ratio and growth", t.replace(fpr + " ", fpr + " ratio=0 growth=0 ", 1)),
        ("union fields out of order", t.replace("capacity=5100 " + fpr, fpr + " capacity=5100", 1)),
        ("union with a layer missing", " layer=".join([head] + layers[1:])),
        ("union with a layer of another seed",
         " layer=".join([head, layers[0], UNIONS[2]["text"].split(" layer=")[2]])),
        ("union with a union as a layer", " layer=".join([head, head] + layers)),
        ("a union's layers under a growing head",
         t.replace("bloomunion:1 capacity=5100 " + fpr, "bloomgrowing:1 capacity=5100 " + fpr
                   + " ratio=0.9 growth=2", 1)),
        ("a growing filter's layers under a union head", " layer=".join(
            [head] + GROWING[0]["text"].split(" layer=")[1:])),
        ("union of 66 layers", " layer=".join([head] + layers * 33)),
    ]
    return out


GROWING_TEXT_VARIANTS = _growing_text_variants() + _union_text_variants()


@pytest.mark.parametrize("name,text", GROWING_TEXT_VARIANTS,
                         ids=[n for n, _ in GROWING_TEXT_VARIANTS])
def test_malformed_growing_text(name, text):
    with pytest.raises(TextFormatError) as e:
        BloomFilter.from_text(text)
    assert e.value.sqlstate == "22P02"


WINDOWS = DOC["windows"]


@pytest.mark.parametrize("entry", WINDOWS, ids=[w["name"] for w in WINDOWS])
def test_window(entry):
    raw = base64.b64decode(entry["bytes"])
    w = BloomWindow(raw)
    t = BloomWindow.from_text(entry["text"])
    assert w.to_bytes() == raw and t.to_bytes() == raw
    assert w.to_text() == entry["text"]
    for p in entry["probes"]:
        at = int(p["at"])
        for value, typ in both(p["key"]):
            assert w.contains(value, at, typ) is p["expect"], (p, value, typ)
        # the same instant as a datetime (exact: microseconds)
        dt = EPOCH + datetime.timedelta(microseconds=at)
        value, typ = typed(p["key"])
        assert w.contains(value, dt, typ) is p["expect"], (p, dt)


@pytest.mark.parametrize("entry", DOC["malformed_windows"],
                         ids=[m["name"] for m in DOC["malformed_windows"]])
def test_malformed_window(entry):
    with pytest.raises(FormatError):
        BloomWindow(base64.b64decode(entry["bytes"]))
