#!/usr/bin/env python3
"""A layered random precedence graph for `taskmap amap` (the scale runs of
docs/algorithm-mapper.md): N modules of time 1-50, each module j > 0 with 1-3 links from
earlier modules (distance exponential, mean 30), 1-20 ITUs each.

    python3 bench/gen_amg.py N OUT.amg [--seed 1]
"""

import argparse
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    r = random.Random(args.seed)
    lines = [f"MODULE m{i} {r.randint(1, 50)}" for i in range(args.n)]
    for j in range(1, args.n):
        for _ in range(r.randint(1, 3)):
            i = max(0, j - 1 - int(r.expovariate(1 / 30)))
            lines.append(f"LINK m{i} m{j} {r.randint(1, 20)}")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
