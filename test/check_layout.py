#!/usr/bin/env python3
"""The shape of src/, checked against its map (src/README.md).

1. Directions between folders: an edge A -> B where a file of folder A
   uses a symbol that an object file of folder B defines (nm), or
   #includes a header of folder B.  Every edge must be one the map's
   ```directions``` block allows; the allowed directions themselves have no
   cycle, and nothing calls into the entry point (src/ itself).
2. Layers within a folder (a ```layers FOLDER``` block): a file calls only
   files of its own layer and of the layers before it.
3. No cycle between files (nm): every strongly connected component of more
   than one file is printed with the symbols of its edges.
4. Headers: a header named after a .c file beside it (x.h, x.c) declares
   only x.c's functions; any other header only functions of its folder.
5. C calls C: no .c file declares an SQL-callable function of its own
   (extern Datum f(PG_FUNCTION_ARGS)) to call it, and DirectFunctionCall
   is used only for PostgreSQL's own functions, never for a function this
   library defines with PG_FUNCTION_INFO_V1.
6. The map names every file of every folder under that folder's heading
   (### src/FOLDER/), and nothing that does not exist.

Run from the top of the tree after a build (make).  Exit 0 when all hold.
"""
import collections
import glob
import os
import re
import subprocess
import sys

SRC = "src"
MAP = os.path.join(SRC, "README.md")
ROOT = "src"    # the map's name of src/ itself, the entry point's folder


def folder_of(path):
    """The map's name of a file's folder: ROOT, or core, value, ..."""
    d = os.path.relpath(os.path.dirname(path), SRC)
    return ROOT if d == "." else d


def read_map():
    text = open(MAP, encoding="utf-8").read()
    problems = []
    allowed = {}
    m = re.search(r"^```directions\n(.*?)^```", text, re.M | re.S)
    if not m:
        return text, {}, {}, ["%s has no ```directions block" % MAP]
    for line in m.group(1).splitlines():
        if not line.strip():
            continue
        left, sep, right = line.partition("->")
        if not sep:
            problems.append("%s: a direction without '->': %r" % (MAP, line))
            continue
        allowed[left.strip()] = set(right.split())
    layers = {}
    for m in re.finditer(r"^```layers (\S+)\n(.*?)^```", text, re.M | re.S):
        order = []
        for line in m.group(2).splitlines():
            name, sep, files = line.partition(":")
            if sep:
                order.append((name.strip(), files.split()))
        layers[m.group(1)] = order
    return text, allowed, layers, problems


def object_graph():
    """(edges: file -> {file: [symbols]}, files, folder of each file)."""
    defs, uses, where = {}, {}, {}
    for o in sorted(glob.glob(os.path.join(SRC, "**", "*.o"), recursive=True)):
        # an object left by a build from before a file moved is not the code
        if not os.path.exists(o[:-2] + ".c"):
            continue
        name = os.path.basename(o)[:-2] + ".c"
        where[name] = folder_of(o)
        uses[name] = set()
        out = subprocess.run(["nm", "-P", o], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            sym, kind = parts[0], parts[1]
            if kind == "U":
                uses[name].add(sym)
            elif kind.isupper():
                defs.setdefault(sym, name)
    edges = collections.defaultdict(lambda: collections.defaultdict(list))
    for name, syms in uses.items():
        for sym in syms:
            owner = defs.get(sym)
            if owner is not None and owner != name:
                edges[name][owner].append(sym)
    return edges, sorted(uses), where, defs


def include_edges():
    """(file, its folder, the folder of a header of src/ it includes, header)."""
    headers = {os.path.basename(p): folder_of(p)
               for p in glob.glob(os.path.join(SRC, "**", "*.h"), recursive=True)}
    out = []
    for p in sorted(glob.glob(os.path.join(SRC, "**", "*.[ch]"), recursive=True)):
        for h in re.findall(r'^#include "([\w.]+)"', open(p, encoding="utf-8").read(), re.M):
            if h in headers:
                out.append((os.path.relpath(p, SRC), folder_of(p), headers[h], h))
    return out


def cycles(edges, nodes):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for f in nodes:
        if f not in index:
            visit(f)
    return found


def check_directions(allowed, edges, where):
    problems = []
    folders = sorted({folder_of(p) for p in
                      glob.glob(os.path.join(SRC, "**", "*.[ch]"), recursive=True)})
    for f in folders:
        if f not in allowed:
            problems.append("%s's directions do not name the folder %s" % (MAP, f))
    for f in sorted(allowed):
        if f not in folders:
            problems.append("%s's directions name %s, which holds no source" % (MAP, f))
        for t in allowed[f]:
            if t != "*" and t not in folders:
                problems.append("%s: %s -> %s, which holds no source" % (MAP, f, t))
            if t == ROOT or (t == "*" and f != ROOT):
                problems.append("%s: %s -> %s: nothing may call into the entry point"
                                % (MAP, f, t))
    declared = {f: {t for t in ts if t != "*"} for f, ts in allowed.items()}
    for comp in cycles(declared, sorted(declared)):
        problems.append("%s's directions have a cycle: %s" % (MAP, " ".join(comp)))

    def ok(a, b):
        return a == b or "*" in allowed.get(a, ()) or b in allowed.get(a, ())

    used = collections.defaultdict(set)
    seen = collections.defaultdict(list)
    for a, targets in edges.items():
        for b, syms in targets.items():
            fa, fb = where[a], where[b]
            if fa != fb:
                used[fa].add(fb)
                seen[(fa, fb)].append("%s -> %s (%s)" % (a, b, " ".join(sorted(syms)[:4])))
    for path, fa, fb, h in include_edges():
        if fa != fb:
            used[fa].add(fb)
            seen[(fa, fb)].append("%s includes %s" % (path, h))
    for (fa, fb), why in sorted(seen.items()):
        if not ok(fa, fb):
            problems.append("folder %s calls %s, which %s does not allow:\n  %s"
                            % (fa, fb, MAP, "\n  ".join(why[:8])))
    return problems, used


def check_layers(layers, edges, where):
    problems = []
    for folder, order in layers.items():
        rank = {}
        for i, (name, files) in enumerate(order):
            for f in files:
                if f in rank:
                    problems.append("%s: %s is in two layers of %s" % (MAP, f, folder))
                rank[f] = (i, name)
        have = sorted(f for f, w in where.items() if w == folder)
        for f in have:
            if f not in rank:
                problems.append("%s: %s/%s is in no layer of %s" % (MAP, folder, f, folder))
        for f in sorted(rank):
            if f not in have:
                problems.append("%s: the layers of %s name %s, which is not built there"
                                % (MAP, folder, f))
        for a in have:
            for b, syms in edges.get(a, {}).items():
                if a in rank and b in rank and rank[b][0] > rank[a][0]:
                    problems.append("%s/%s (layer %s) calls %s (layer %s, above it): %s"
                                    % (folder, a, rank[a][1], b, rank[b][1],
                                       " ".join(sorted(syms))))
    return problems


def check_file_cycles(edges, files):
    problems = []
    for comp in cycles(edges, files):
        lines = ["cycle between files: " + " ".join(comp)]
        for a in comp:
            for b in comp:
                if b in edges.get(a, {}):
                    lines.append("  %s -> %s: %s" % (a, b, " ".join(sorted(edges[a][b]))))
        problems.append("\n".join(lines))
    return problems


def check_headers(defs, where):
    problems = []
    decl = re.compile(r"^(?:extern\s+)?[A-Za-z_][\w \t\*]*?\b(\w+)\s*\(", re.M)
    for h in sorted(glob.glob(os.path.join(SRC, "**", "*.h"), recursive=True)):
        text = re.sub(r"/\*.*?\*/", "", open(h, encoding="utf-8").read(), flags=re.S)
        pair = os.path.basename(h)[:-2] + ".c"
        paired = os.path.exists(os.path.join(os.path.dirname(h), pair))
        for name in sorted(set(decl.findall(text))):
            owner = defs.get(name)
            if owner is None:
                continue
            if paired and owner != pair:
                problems.append("%s, named after %s, declares %s of %s"
                                % (h, pair, name, owner))
            elif not paired and where.get(owner) != folder_of(h):
                problems.append("%s declares %s of %s, a file of another folder (%s)"
                                % (h, name, owner, where.get(owner)))
    return problems


def check_c_calls_c():
    problems = []
    sql_callable = set()
    sources = sorted(glob.glob(os.path.join(SRC, "**", "*.c"), recursive=True))
    texts = {p: open(p, encoding="utf-8").read() for p in sources}
    for text in texts.values():
        sql_callable.update(re.findall(r"PG_FUNCTION_INFO_V1\((\w+)\)", text))
    for path, text in texts.items():
        for m in re.finditer(r"^extern\s+Datum\s+(\w+)\s*\(\s*PG_FUNCTION_ARGS\s*\)", text, re.M):
            problems.append("%s declares the SQL-callable %s to call it: call a C function instead"
                            % (path, m.group(1)))
        for m in re.finditer(r"DirectFunctionCall\d\w*\(\s*(\w+)", text):
            if m.group(1) in sql_callable:
                problems.append("%s calls this library's SQL-callable %s through the function manager"
                                % (path, m.group(1)))
    return problems


def check_file_lists(text):
    problems = []
    named = {}
    for m in re.finditer(r"^### (src/(?:[\w]+/)?)\s*\n(.*?)(?=^#|\Z)", text, re.M | re.S):
        folder = m.group(1).rstrip("/")
        folder = ROOT if folder == "src" else folder[len("src/"):]
        named.setdefault(folder, set()).update(re.findall(r"`([\w]+\.[ch])`", m.group(2)))
    files = collections.defaultdict(set)
    for p in glob.glob(os.path.join(SRC, "**", "*.[ch]"), recursive=True):
        files[folder_of(p)].add(os.path.basename(p))
    for folder in sorted(set(files) | set(named)):
        shown = "src/" if folder == ROOT else "src/%s/" % folder
        for f in sorted(files[folder] - named.get(folder, set())):
            problems.append("%s does not name %s%s (under ### %s)" % (MAP, shown, f, shown))
        for f in sorted(named.get(folder, set()) - files[folder]):
            problems.append("%s names %s%s, which does not exist" % (MAP, shown, f))
    for p in glob.glob(os.path.join(SRC, "**", "*"), recursive=True):
        if os.path.isfile(p) and not re.search(r"\.([ch]|o|bc)$", p) and p != MAP:
            problems.append("%s: a file of src/ that is no C source: keep src/ for the code" % p)
    return problems


def main():
    if not os.path.exists(MAP):
        print("layout: %s is missing" % MAP)
        return 1
    text, allowed, layers, problems = read_map()
    edges, files, where, defs = object_graph()
    if not files:
        print("layout: no object files in src/: build first (make)")
        return 1
    dir_problems, used = check_directions(allowed, edges, where)
    problems += dir_problems
    problems += check_layers(layers, edges, where)
    problems += check_file_cycles(edges, files)
    problems += check_headers(defs, where)
    problems += check_c_calls_c()
    problems += check_file_lists(text)
    for p in problems:
        print("layout: " + p)
    if problems:
        print("layout: %d problem(s)" % len(problems))
        return 1
    print("layout: %d object files in %d folders, %d edges between files, no cycle"
          % (len(files), len(set(where.values())), sum(len(v) for v in edges.values())))
    print("layout: folder directions used (nm and #include), all allowed by %s:" % MAP)
    for f in sorted(used, key=lambda f: (f != ROOT, f)):
        unused = sorted(allowed.get(f, set()) - used[f] - {"*"})
        print("layout:   %-9s -> %s%s" % (f, " ".join(sorted(used[f])),
                                         ("   (allowed, unused: %s)" % " ".join(unused))
                                         if unused else ""))
    for folder, order in layers.items():
        print("layout: layers of %s/ kept: %s" % (folder, " <- ".join(n for n, _ in order)))
    print("layout: headers declare their own file's or folder's functions; C calls C;"
          " %s names every file" % MAP)
    return 0


if __name__ == "__main__":
    sys.exit(main())
