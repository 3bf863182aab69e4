#!/usr/bin/env python3
"""bench/grow_ratio.py -- the size of a grown filter against one sized for
its keys, for tightening ratios other than the one new filters get
(BLOOM_GROW_RATIO, 0.9), computed with the sizing rule of docs/FORMAT.md
section 4 (test/reference.py's estimate(), which the server's sizing
agrees with) rather than built: a filter of first capacity C, growth G and
rate P that holds N keys has every layer up to the one holding key N,
layer i sized for C * G^i keys at P * (1 - r) * r^i.

    python3 bench/grow_ratio.py [C G P]

prints, for each ratio r, the bytes of the grown filter / the bytes of a
filter sized for N keys at P, at N = 10-fold to 1 000-fold C (and just
after a growth, when the newest layer is empty).
"""
import functools
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load_estimate():
    # only the sizing functions of the reference reader (no xxhash needed)
    src = open(os.path.join(HERE, "..", "test", "reference.py")).read()
    start = src.index("def model_fpr")
    end = src.index("def _cli_value")
    ns = {"math": math}
    exec(src[start:end], ns)
    return functools.lru_cache(None)(ns["estimate"])


def grown_blocks(estimate, c, g, p, r, n):
    total, cap, ci, pi = 0, 0, c, p * (1 - r)
    while cap < n:
        total += estimate(ci, pi)[0]
        cap += ci
        ci *= g
        pi *= r
    return total


def main(argv):
    c, g, p = (int(argv[0]), int(argv[1]), float(argv[2])) if len(argv) == 3 else (10000, 2, 0.01)
    estimate = load_estimate()
    # fold points, and the first key of a new layer (just after a growth)
    points = [10, 100, 200, 1000]
    after = c * (g ** 8 - 1) // (g - 1) + 1
    print("capacity %d, growth %d, rate %g; grown bytes / right-sized bytes" % (c, g, p))
    print("ratio  " + "  ".join("%5d-fold" % f for f in points) +
          "  after a growth (%d keys)" % after)
    for r in (0.7, 0.8, 0.85, 0.9, 0.95):
        cells = []
        for n in [c * f for f in points] + [after]:
            cells.append("%9.2f" % (grown_blocks(estimate, c, g, p, r, n) / estimate(n, p)[0]))
        print("%.2f  %s" % (r, "  ".join(cells)))


if __name__ == "__main__":
    main(sys.argv[1:])
