#!/usr/bin/env python3
"""A layered random precedence graph for `taskmap amap` (the scale runs of
docs/algorithm-mapper.md): N modules of time 1-50, each module j > 0 with 1-3 links from
earlier modules (distance exponential, mean 30), 1-20 ITUs each.

With --diamonds: a chain of N/4 EOR diamonds instead (an `out=eor` module forks with
probability 0.5 each to two modules, joined by an `in=eor` module, which links to the next
diamond), times 1-50, 1-20 ITUs per link.

    python3 bench/gen_amg.py N OUT.amg [--seed 1] [--diamonds]
"""

import argparse
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--diamonds", action="store_true")
    args = ap.parse_args()
    r = random.Random(args.seed)
    if args.diamonds:
        write(args.out, diamonds(args.n, r))
        return
    lines = [f"MODULE m{i} {r.randint(1, 50)}" for i in range(args.n)]
    for j in range(1, args.n):
        for _ in range(r.randint(1, 3)):
            i = max(0, j - 1 - int(r.expovariate(1 / 30)))
            lines.append(f"LINK m{i} m{j} {r.randint(1, 20)}")
    write(args.out, lines)


def diamonds(n, r):
    """The lines of a chain of n // 4 EOR diamonds."""
    mods, links, prev = [], [], None
    for i in range(0, n - 3, 4):
        e, a, b, j = f"e{i}", f"a{i}", f"b{i}", f"j{i}"
        mods += [f"MODULE {e} {r.randint(1, 50)} out=eor", f"MODULE {a} {r.randint(1, 50)}",
                 f"MODULE {b} {r.randint(1, 50)}", f"MODULE {j} {r.randint(1, 50)} in=eor"]
        links += [f"LINK {e} {a} {r.randint(1, 20)} 0.5", f"LINK {e} {b} {r.randint(1, 20)} 0.5",
                  f"LINK {a} {j} {r.randint(1, 20)}", f"LINK {b} {j} {r.randint(1, 20)}"]
        if prev:
            links.append(f"LINK {prev} {e} {r.randint(1, 20)}")
        prev = j
    return mods + links


def write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
