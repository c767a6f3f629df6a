#!/usr/bin/env python3
"""The Algorithm Mapper (`taskmap amap`) on processors of different speeds, with the
Kasahara STG task graphs (../shared/data/stg): does knowing the speeds (`--speeds`) pay?

For every graph, machine and communication ratio (as in bench/amap_stg.py: itus =
round(ratio × mean task time)), four runs, all scored on the machine with its speeds:
  * blind: `-A alloc` (or `alloc-ls`) as if every processor ran at speed 1, its
    assignment then scored with `--assignment FILE --speeds S`;
  * aware: the same algorithm given `--speeds S`.
It prints T_REAL / LB with LB = max(critical path / fastest speed, Σ times / Σ speeds),
which no assignment beats, and the geometric mean of aware / blind T_REAL.

    python3 bench/amap_speeds.py [--sets app,rnc50,rnc100] [--limit N] [--ratios 0.1,1]

Needs the release binary (cargo build --release), or TASKMAP=path.
"""

import argparse
import math
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from amap_stg import DATA, stg_case  # noqa: E402
from hetero_stg import run  # noqa: E402

# (interconnect, processors, speeds as --speeds takes them)
MACHINES = [("dual-bus", 4, "3,1:3"), ("banyan", 8, "4:2,1:6"), ("multibus:4", 16, "2:4,1:8,0.5:4")]


def expand(spec):
    out = []
    for item in spec.split(","):
        s, _, n = item.partition(":")
        out += [float(s)] * int(n or 1)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="app,rnc50,rnc100")
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--ratios", default="0.1,1")
    args = ap.parse_args()
    print("| set | comm/comp | machine (speeds) | graphs | alg | blind T_REAL/LB (mean) | aware T_REAL/LB (mean) | aware/blind (geo. mean, best, worst) | aware better, worse |")
    print("|---|---|---|---|---|---|---|---|---|")
    tmp = tempfile.mkdtemp()
    for s in args.sets.split(","):
        d = os.path.join(DATA, s)
        files = sorted(f for f in os.listdir(d) if ".stg" in f)[: args.limit]
        for ratio in [float(r) for r in args.ratios.split(",")]:
            for system, k, speeds in MACHINES:
                sp = expand(speeds)
                assert len(sp) == k
                for alg in ("alloc", "alloc-ls"):
                    rows = []
                    for f in files:
                        path = os.path.join(d, f)
                        cp, work, itus = stg_case(path, ratio)
                        lb = max(cp / max(sp), work / sum(sp))
                        base = ["amap", "--stg", path, "-k", str(k), "--system", system,
                                "--itus", str(itus), "-f", "json"]
                        out = os.path.join(tmp, "blind.txt")
                        run(base + ["-A", alg, "-o", out])
                        blind, _ = run(base + ["--assignment", out, "--speeds", speeds])
                        aware, _ = run(base + ["-A", alg, "--speeds", speeds])
                        rows.append((blind["t_real"] / lb, aware["t_real"] / lb,
                                     aware["t_real"] / blind["t_real"]))
                    ratios = [r[2] for r in rows]
                    geo = math.exp(statistics.mean(math.log(x) for x in ratios))
                    print(f"| {s} | {ratio:g} | {system}, k={k} ({speeds}) | {len(rows)} | {alg} "
                          f"| {statistics.mean(r[0] for r in rows):.2f} "
                          f"| {statistics.mean(r[1] for r in rows):.2f} "
                          f"| {geo:.3f}, {min(ratios):.3f}, {max(ratios):.3f} "
                          f"| {sum(x < 1 - 1e-9 for x in ratios)}, {sum(x > 1 + 1e-9 for x in ratios)} |",
                          flush=True)


if __name__ == "__main__":
    main()
