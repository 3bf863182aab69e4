#!/usr/bin/python3
"""Checks META.json against the PGXN Meta Spec 1.0.0 (https://pgxn.org/meta/spec.txt),
written from the spec: required keys and their types, SemVer versions,
license strings, terms, prerequisites, and that it agrees with the tree
(bloomfilter.control's default_version, files that exist).  No validator for
it is packaged in Debian; run: python3 test/meta_check.py [META.json]"""
import json
import os
import re
import sys

LICENSES = {
    "agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd", "freebsd",
    "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1", "lgpl_3_0", "mit",
    "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5", "postgresql", "qpl_1_0", "ssleay",
    "sun", "zlib", "open_source", "restricted", "unrestricted", "unknown"}
TOP_KEYS = {"name", "version", "abstract", "maintainer", "license", "provides", "meta-spec",
            "description", "generated_by", "tags", "no_index", "prereqs", "release_status",
            "resources"}
REQUIRED = ["name", "version", "abstract", "maintainer", "license", "provides", "meta-spec"]
PHASES = {"configure", "build", "test", "runtime", "develop"}
RELATIONS = {"requires", "recommends", "suggests", "conflicts"}
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$")
TERM = re.compile(r"^[^/\\\s\x00-\x1f\x7f]{2,}$")
RANGE = re.compile(r"^\s*(==|!=|>=|<=|>|<)?\s*(\S+)\s*$")

errors = []


def err(msg):
    errors.append(msg)


def nonempty_string(v, where):
    if not isinstance(v, str) or not v:
        err(f"{where}: must be a non-empty string")


def version(v, where):
    if not isinstance(v, str) or not SEMVER.match(v):
        err(f"{where}: {v!r} is not a SemVer version")


def custom(key):
    return re.match(r"^[xX]_.", key) is not None


def check_range(v, where):
    if v == 0:
        return
    if not isinstance(v, str):
        err(f"{where}: a version range is 0 or a string")
        return
    for part in v.split(","):
        m = RANGE.match(part)
        if not m:
            err(f"{where}: bad version range {v!r}")
        else:
            version(m.group(2), where)


def check(meta, root):
    for k in REQUIRED:
        if k not in meta:
            err(f"missing required key {k!r}")
    for k in meta:
        if k not in TOP_KEYS and not custom(k):
            err(f"unknown key {k!r}")
    if not isinstance(meta.get("name", ""), str) or not TERM.match(meta.get("name", "")):
        err("name: must be a term (two or more characters, no slash, backslash, space)")
    version(meta.get("version"), "version")
    nonempty_string(meta.get("abstract"), "abstract")
    for k in ("description", "generated_by"):
        if k in meta:
            nonempty_string(meta[k], k)
    m = meta.get("maintainer")
    if isinstance(m, list):
        if not m:
            err("maintainer: empty list")
        for i, x in enumerate(m):
            nonempty_string(x, f"maintainer[{i}]")
    else:
        nonempty_string(m, "maintainer")
    lic = meta.get("license")
    if isinstance(lic, str):
        if lic not in LICENSES:
            err(f"license: {lic!r} is not a license string of the spec")
    elif isinstance(lic, list):
        if not lic or any(x not in LICENSES for x in lic):
            err("license: a list must hold license strings of the spec")
    elif isinstance(lic, dict):
        if not lic or any(not isinstance(u, str) or not re.match(r"^[a-z][a-z0-9+.-]*:", u)
                          for u in lic.values()):
            err("license: an object must map names to URIs")
    else:
        err("license: a string, a list or an object")
    prov = meta.get("provides")
    if not isinstance(prov, dict) or not prov:
        err("provides: a non-empty object")
        prov = {}
    for ext, p in prov.items():
        if not TERM.match(ext):
            err(f"provides: {ext!r} is not a term")
        if not isinstance(p, dict):
            err(f"provides.{ext}: must be an object")
            continue
        for k in p:
            if k not in {"file", "version", "abstract", "docfile"} and not custom(k):
                err(f"provides.{ext}: unknown key {k!r}")
        for k in ("file", "version"):
            if k not in p:
                err(f"provides.{ext}: missing {k!r}")
        version(p.get("version"), f"provides.{ext}.version")
        for k in ("file", "docfile"):
            if k in p and not os.path.isfile(os.path.join(root, p[k])):
                err(f"provides.{ext}.{k}: no file {p[k]}")
        if "abstract" in p:
            nonempty_string(p["abstract"], f"provides.{ext}.abstract")
    spec = meta.get("meta-spec")
    if not isinstance(spec, dict) or spec.get("version") != "1.0.0":
        err("meta-spec: an object with version 1.0.0")
    elif set(spec) - {"version", "url"}:
        err("meta-spec: only version and url")
    if "release_status" in meta and meta["release_status"] not in ("stable", "testing", "unstable"):
        err("release_status: stable, testing or unstable")
    tags = meta.get("tags", [])
    if not isinstance(tags, list) or not tags and "tags" in meta:
        err("tags: a non-empty list")
    else:
        for t in tags:
            if not isinstance(t, str) or not 1 <= len(t) <= 255 or t.strip() != t:
                err(f"tags: bad tag {t!r}")
        if len(set(tags)) != len(tags):
            err("tags: duplicates")
    pre = meta.get("prereqs", {})
    if not isinstance(pre, dict):
        err("prereqs: an object")
        pre = {}
    for phase, rels in pre.items():
        if phase not in PHASES and not custom(phase):
            err(f"prereqs: unknown phase {phase!r}")
            continue
        for rel, deps in (rels or {}).items():
            if rel not in RELATIONS:
                err(f"prereqs.{phase}: unknown relationship {rel!r}")
            elif not isinstance(deps, dict) or not deps:
                err(f"prereqs.{phase}.{rel}: a non-empty object")
            else:
                for name, rng in deps.items():
                    if not TERM.match(name):
                        err(f"prereqs.{phase}.{rel}: {name!r} is not a term")
                    check_range(rng, f"prereqs.{phase}.{rel}.{name}")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "META.json"
    root = os.path.dirname(os.path.abspath(path))
    with open(path, encoding="utf-8") as f:
        meta = json.load(f)
    check(meta, root)
    # agreement with the tree: the distribution is the control file's version
    control = open(os.path.join(root, "bloomfilter.control"), encoding="utf-8").read()
    m = re.search(r"^default_version\s*=\s*'([^']*)'", control, re.M)
    want = m.group(1) if m else None
    if want is not None:
        semver = want + ".0" * (2 - want.count("."))
        for where, got in [("version", meta.get("version"))] + [
                (f"provides.{e}.version", p.get("version"))
                for e, p in meta.get("provides", {}).items() if isinstance(p, dict)]:
            if got != semver:
                err(f"{where}: {got!r}, but bloomfilter.control's default_version is {want} ({semver})")
    for e in errors:
        print(f"META.json: {e}")
    print(f"META.json: {'ok' if not errors else str(len(errors)) + ' errors'} (PGXN Meta Spec 1.0.0)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
