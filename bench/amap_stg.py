#!/usr/bin/env python3
"""The Algorithm Mapper (`taskmap amap`) on the Kasahara STG task graphs
(../shared/data/stg), against lower bounds: the paper's ALLOC (`-A alloc`) and ours
(`-A alloc-ls`).

Every STG task is a module (AND logic, its STG time), every arc a link of --itus ITUs
chosen so that communication / computation is the ratio given (the paper's robot study
varies it from 1/10 to 10): itus = round(ratio × mean task time). Machines as in the
paper's studies: 4 processors on a single bus with dual-port memories, 8 on a Banyan,
16 on a 16×16×4 multiple bus; ITU time 1. For each graph the script reports T_REAL of
each algorithm, the speed-up T_seq / T_REAL, and T_REAL / LB with
LB = max(critical path without communication, T_seq / k), which no assignment beats.

    python3 bench/amap_stg.py [--sets app,rnc50,rnc100,rnc300] [--limit N] [--ratios 0.1,1]

Needs the release binary (cargo build --release), or TASKMAP=path.
"""

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hetero_stg import read_stg, run  # noqa: E402  (the same reader and runner)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data", "stg")
MACHINES = [("dual-bus", 4), ("banyan", 8), ("multibus:4", 16)]


def critical_path(recs):
    finish = []
    for t, preds in recs:
        finish.append(max((finish[p] for p in preds), default=0) + t)
    return max(finish), sum(t for t, _ in recs)


def stg_case(path, ratio):
    """(critical path, total time, ITUs per arc) of an STG graph for a communication /
    computation ratio: itus = round(ratio × mean task time)."""
    recs = read_stg(path)
    cp, work = critical_path(recs)
    n = sum(1 for t, _ in recs if t > 0) or 1
    return cp, work, max(0, round(ratio * work / n))


def amap(path, system, k, itus, alg):
    return run(["amap", "--stg", path, "-k", str(k), "--system", system,
                "--itus", str(itus), "-A", alg, "-f", "json"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="app,rnc50,rnc100,rnc300")
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--ratios", default="0.1,1")
    args = ap.parse_args()
    ratios = [float(r) for r in args.ratios.split(",")]
    print("| set | comm/comp | machine | graphs | alloc T_REAL/LB (mean, max) | alloc-ls T_REAL/LB (mean, max) | alloc-ls speed-up (mean) | alloc time (max) | alloc-ls time (max) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in args.sets.split(","):
        d = os.path.join(DATA, s)
        files = sorted(f for f in os.listdir(d) if ".stg" in f)[: args.limit]
        for ratio in ratios:
            for system, k in MACHINES:
                rows = []
                for f in files:
                    path = os.path.join(d, f)
                    cp, work, itus = stg_case(path, ratio)
                    lb = max(cp, work / k)
                    a, ta = amap(path, system, k, itus, "alloc")
                    b, tb = amap(path, system, k, itus, "alloc-ls")
                    assert b["t_real"] <= a["t_real"] + 1e-9, (f, a["t_real"], b["t_real"])
                    rows.append((a["t_real"] / lb, b["t_real"] / lb, b["speedup"], ta, tb))
                col = lambda i: [r[i] for r in rows]
                print(f"| {s} | {ratio:g} | {system}, k={k} | {len(rows)} "
                      f"| {statistics.mean(col(0)):.2f}, {max(col(0)):.2f} "
                      f"| {statistics.mean(col(1)):.2f}, {max(col(1)):.2f} "
                      f"| {statistics.mean(col(2)):.2f} "
                      f"| {max(col(3)):.2f} s | {max(col(4)):.2f} s |", flush=True)


if __name__ == "__main__":
    main()
