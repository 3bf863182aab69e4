#!/usr/bin/env python3
"""The shape of src/, checked from the built objects and the sources.

1. No cycle between files: an edge A -> B where A's object file uses a
   symbol B's defines (nm); every strongly connected component of more than
   one file is a cycle, printed with the symbols of its edges.  The entry
   point (bloomfilter.c, _PG_init) and the index access method's handler
   (bf_index_am.c) register the others and nothing calls back into them,
   so they need no exception.
2. C calls C: no .c file declares an SQL-callable function of its own
   (extern Datum f(PG_FUNCTION_ARGS)) to call it, and DirectFunctionCall
   is used only for PostgreSQL's own functions, never for a function this
   library defines with PG_FUNCTION_INFO_V1.
3. Every file of src/ is named in README.md's layout table, and every .c
   file in a header: its own (x.c and x.h) or a family header's list.

Run from the top of the tree after a build (make).  Exit 0 when all hold.
"""
import collections
import glob
import os
import re
import subprocess
import sys

SRC = "src"


def object_graph():
    """(edges: file -> {file: [symbols]}, files) from nm of src/*.o."""
    defs, uses = {}, {}
    objs = sorted(glob.glob(os.path.join(SRC, "*.o")))
    for o in objs:
        name = os.path.basename(o)[:-2]
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
    return edges, sorted(uses)


def cycles(edges, files):
    """Strongly connected components of more than one file (Tarjan)."""
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
    for f in files:
        if f not in index:
            visit(f)
    return found


def check_cycles():
    edges, files = object_graph()
    if not files:
        return ["no object files in src/: build first (make)"]
    problems = []
    for comp in cycles(edges, files):
        lines = ["cycle between files: " + " ".join(f + ".c" for f in comp)]
        for a in comp:
            for b in comp:
                if b in edges.get(a, {}):
                    lines.append("  %s.c -> %s.c: %s" % (a, b, " ".join(sorted(edges[a][b]))))
        problems.append("\n".join(lines))
    print("layout: %d object files, %d edges between files, no cycle" %
          (len(files), sum(len(v) for v in edges.values()))
          if not problems else "layout: cycles found")
    return problems


def check_c_calls_c():
    problems = []
    sql_callable = set()
    sources = sorted(glob.glob(os.path.join(SRC, "*.c")))
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


def check_file_lists():
    problems = []
    readme = open("README.md", encoding="utf-8").read()
    start = readme.find("## Layout of this repository")
    table = readme[start:readme.find("\n## ", start + 1)] if start >= 0 else ""
    if not table:
        problems.append("README.md has no section \"Layout of this repository\"")
    named = set(re.findall(r"src/([\w.]+)", table))
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(SRC, "*.[ch]")))
    for f in files:
        if f not in named:
            problems.append("README.md's layout table does not name src/%s" % f)
    for f in sorted(named):
        if f not in files:
            problems.append("README.md's layout table names src/%s, which does not exist" % f)
    headers = {os.path.basename(p): open(p, encoding="utf-8").read()
               for p in glob.glob(os.path.join(SRC, "*.h"))}
    for f in files:
        if not f.endswith(".c"):
            continue
        if f[:-2] + ".h" in headers:
            continue
        if not any(re.search(r"(?<![\w.])%s\b" % re.escape(f), h) for h in headers.values()):
            problems.append("no header of src/ names %s (its own header, or a family header's list)" % f)
    return problems


def main():
    problems = check_cycles() + check_c_calls_c() + check_file_lists()
    for p in problems:
        print("layout: " + p)
    if problems:
        print("layout: %d problem(s)" % len(problems))
        return 1
    print("layout: C calls C; README and headers name every file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
