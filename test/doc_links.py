#!/usr/bin/env python3
"""The links of the documentation resolve: every relative link of README.md,
CONTRIBUTING.md, CHANGELOG.md and docs/*.md names a file or folder that
exists, and every #anchor names a heading of its target file (as GitHub
makes anchors from headings).  Links inside code are not links."""
import glob
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
FILES = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"] + sorted(
    os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def prose(text):
    """The text outside fenced code blocks and inline code."""
    out, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"^(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[:3]
            elif line.startswith(fence):
                fence = None
            out.append("")
            continue
        out.append("" if fence else re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)      # GitHub keeps letters, digits, _ and -
    return s.replace(" ", "-")


def anchors(path):
    found, seen = set(), {}
    text = open(path, encoding="utf-8").read()
    fence = None
    for line in text.split("\n"):
        m = re.match(r"^(```+|~~~+)", line)
        if m:
            fence = None if fence else m.group(1)[:3]
            continue
        if fence:
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1)))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else "%s-%d" % (base, n))
    for m in re.finditer(r'<a (?:name|id)="([^"]+)"', text):
        found.add(m.group(1))
    return found


def main():
    problems, count = [], 0
    for doc in FILES:
        path = os.path.join(ROOT, doc)
        if not os.path.exists(path):
            problems.append("%s does not exist" % doc)
            continue
        for lineno, line in enumerate(prose(open(path, encoding="utf-8").read()).split("\n"), 1):
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue        # https:, mailto:
                count += 1
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                if not os.path.exists(dest):
                    problems.append("%s:%d: %s: no such file" % (doc, lineno, target))
                    continue
                if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    problems.append("%s:%d: %s: no such heading in %s"
                                    % (doc, lineno, target, os.path.relpath(dest, ROOT)))
    for p in problems:
        print("links: " + p)
    print("links: %d of %d links of %d files resolve" % (count - len(problems), count, len(FILES)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
