#!/usr/bin/env python3
"""Write the seed corpus of the fuzz harnesses (test/fuzz/corpus/NAME/):
valid filters of every family in bytes and in text form, base64 strings,
family and type names, and false-positive rates.  The seeds are committed;
rerun this only to change them:  python3 test/fuzz/make_corpus.py
"""
import base64
import hashlib
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILIES = ["none", "integer", "float", "numeric", "text", "bytea", "uuid",
            "boolean", "date", "timestamp", "timestamptz", "enum", "record", "other"]


def header(family, detail, nblocks, k, seed, inserted, capacity, fpr, flags=None):
    if flags is None:
        flags = 1 if family == 13 or (family == 12 and any(
            (detail >> (4 * i)) & 0xF == 13 for i in range(8))) else 0
    return (b"BLMF" + struct.pack("<HBBBBHI", 1, 1, 1, family, flags, k, detail)
            + struct.pack("<qQQqdQ", seed, nblocks, inserted, capacity, fpr, 0))


def fpr_text(x):
    s = repr(x)
    if s.endswith(".0"):
        s = s[:-2]
    if "e" in s:
        m, e = s.split("e")
        s = "%se%s%02d" % (m, "-" if int(e) < 0 else "+", abs(int(e)))
    return s


def text(family, detail, typname, nblocks, k, seed, inserted, capacity, fpr, bits):
    fam = FAMILIES[family]
    if family == 12:
        fam += "(" + ",".join(FAMILIES[(detail >> (4 * i)) & 0xF]
                              for i in range(8) if (detail >> (4 * i)) & 0xF) + ")"
    elif family == 13:
        fam += "(" + typname + ")"
    return ("bloomfilter:1 layout=blocked hash=xxh3_64 family=%s nhashes=%d nbits=%d "
            "seed=%d capacity=%d fpr=%s inserted=%d bits=%s" % (
                fam, k, nblocks * 512, seed, capacity, fpr_text(fpr), inserted,
                base64.b64encode(bits).decode())).encode()


def bits_for(i, nblocks):
    return bytes(hashlib.sha256(b"%d-%d" % (i, j)).digest()[j % 32] & (0xFF >> (i % 8))
                 for j in range(64 * nblocks))


def write(kind, name, data):
    d = os.path.join(HERE, "corpus", kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    cases = []
    for fam in range(14):
        detail = {12: 0x41, 13: 0}.get(fam, 0)
        cases.append((fam, detail, 1 + fam % 3, 1 + fam * 4 % 64, fam - 7,
                      0 if fam == 0 else fam * 3, 1000 * fam, [0.01, 1e-05, 0.30000000000000004,
                                                                0.0, 5e-324][fam % 5]))
    cases.append((12, 0xD41, 2, 7, 0, 5, 0, 0.0))            # record with an "other" field
    cases.append((1, 0, 1, 64, -2**63, 2**63 - 1, 2**63 - 1, 0.5))
    for i, (fam, detail, nb, k, seed, ins, cap, fpr) in enumerate(cases):
        bits = bits_for(i, nb)
        typname = "fuzz.t"
        if fam == 13:
            # the harnesses' resolver derives the OID from the name (FNV-1a | 1)
            h = 2166136261
            for c in typname.encode():
                h = ((h ^ c) * 16777619) & 0xFFFFFFFF
            detail = h | 1
        write("header", "valid-%02d" % i, header(fam, detail, nb, k, seed, ins, cap, fpr) + bits)
        write("text", "valid-%02d" % i, text(fam, detail, typname, nb, k, seed, ins, cap, fpr, bits))
    for i, (fam, tn) in enumerate([(13, "pg_catalog.inet"), (13, "time without time zone[]"),
                                   (13, '"odd schema"."span (days)"'), (13, "character[]")]):
        write("text", "typename-%d" % i, text(fam, 1, tn, 1, 3, 0, 1, 10, 0.01, bytes(64)))
    for i, n in enumerate([0, 1, 2, 3, 4, 64, 100]):
        raw = hashlib.sha512(b"%d" % n).digest() * 2
        write("base64", "b64-%d" % i, bytes([2]) + base64.b64encode(raw[:n]))
    for i, name in enumerate(FAMILIES + ["pg_catalog.inet", "time with time zone", "bit varying[]",
                                         '"a ""b"" (c)".x', "s.t_1[]"]):
        write("names", "name-%02d" % i, name.encode())
    for i, x in enumerate([0.01, 1e-05, 0.30000000000000004, 5e-324, -0.0, 2.0**-44, 1e15]):
        write("names", "fpr-%d" % i, struct.pack("<d", x))
    # growing filters: those of the conformance file, grown by the server
    with open(os.path.join(HERE, "..", "conformance", "conformance.json"), encoding="utf-8") as f:
        doc = json.load(f)
    for i, g in enumerate(doc["growing"]):
        write("grow", "valid-%02d" % i, base64.b64decode(g["bytes"]))


if __name__ == "__main__":
    main()
