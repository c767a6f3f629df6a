#!/usr/bin/env python3
"""MATEHa, mateha-ls, HEFT, heft-ls and PEFT (--algs) on the Kasahara STG task graphs (../shared/data/stg), on two-cluster
platforms, against lower bounds.

Every STG task becomes a task of one sub-task, every arc a message of --bytes bytes
(`taskmap hetero --stg`). Platforms: p4 (cluster 1) and celeron (cluster 2, --slowness
times slower), a LAN inside a cluster and a slower switch between them. For each graph
the script reports the final time T of each algorithm (SIMULHa), the speed-up
T_seq / T (T_seq: the whole program on one p4), and T / LB with
LB = max(critical path on p4 times without communication, total work / total speed),
which no allocation can beat.

    python3 bench/hetero_stg.py [--sets app,rnc50,rnc100,rnc300] [--limit N] [--bytes 1000]

Needs the release binary (cargo build --release), or TASKMAP=path.
"""

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data", "stg")
TASKMAP = os.environ.get("TASKMAP", os.path.join(ROOT, "target", "release", "taskmap"))

PLATFORM = """PROCTYPE p4 {p4}
PROCTYPE celeron {cel}
COMM lan 1 0.001
COMM switch 2 0.002
LINK * * switch
LINK p4 p4 lan
LINK celeron celeron lan
"""


def read_stg(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = [l for l in f.read().splitlines() if l.strip()]
    recs = []
    for l in lines[1:]:
        if l.lstrip().startswith("#"):
            break
        v = [int(x) for x in l.split()]
        recs.append((v[1], v[3:]))
    return recs


def bounds(recs, p4, cel, slow):
    """Critical path (p4 times, no communication) and total work / total speed."""
    finish = []
    for t, preds in recs:
        start = max((finish[p] for p in preds), default=0)
        finish.append(start + t)
    work = sum(t for t, _ in recs)
    speed = p4 + (cel / slow if cel else 0)
    return max(finish), work / speed, work


def run(args_list):
    t0 = time.time()
    out = subprocess.run([TASKMAP] + args_list, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"taskmap failed: {' '.join(args_list)}\n{out.stderr}")
    return json.loads(out.stdout), time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="app,rnc50,rnc100,rnc300")
    ap.add_argument("--limit", type=int, default=20, help="graphs per random set")
    ap.add_argument("--bytes", type=int, default=1000)
    ap.add_argument("--slowness", type=float, default=1.2)
    ap.add_argument("--platforms", default="2+2,4+12")
    ap.add_argument("--algs", default="mateha,mateha-ls,heft,heft-ls,peft")
    ap.add_argument("--priority", default="file", help="taskmap hetero --priority")
    args = ap.parse_args()
    algs = args.algs.split(",")
    tmp = tempfile.mkdtemp()
    print(f"bytes per message {args.bytes}; lan 1 + 0.001/byte, switch 2 + 0.002/byte; "
          f"celeron {args.slowness}x slower; first {args.limit} graphs of each random set")
    print()
    names = " / ".join(algs)
    print(f"| set | platform | graphs | T/LB {names} | speed-up {names} | time {names} |")
    print("|---|---|---|---|---|---|")
    for plat in args.platforms.split(","):
        p4, cel = (int(x) for x in plat.split("+"))
        ppath = os.path.join(tmp, f"p{p4}_{cel}.platform")
        with open(ppath, "w") as f:
            f.write(PLATFORM.format(p4=p4, cel=cel))
        for s in args.sets.split(","):
            d = os.path.join(DATA, s)
            files = sorted(os.listdir(d))
            if s != "app":
                files = files[: args.limit]
            r = {a: [] for a in algs}
            r["su"] = {a: [] for a in algs}
            r["t"] = {a: [] for a in algs}
            for name in files:
                path = os.path.join(d, name)
                recs = read_stg(path)
                cp, wl, work = bounds(recs, p4, cel, args.slowness)
                lb = max(cp, wl)
                for alg in algs:
                    j, secs = run(["hetero", "--stg", path, "--platform", ppath, "--slowness",
                                   f"1,{args.slowness}", "--bytes", str(args.bytes), "-A", alg,
                                   "--priority", args.priority,
                                   "-f", "json"] + (["-s", "1"] if alg.endswith("-ls") else []))
                    r[alg].append(j["makespan"] / lb)
                    r["su"][alg].append(work / j["makespan"])
                    r["t"][alg].append(secs)
            g = statistics.geometric_mean
            ratio = " / ".join(f"{g(r[a]):.3f}" for a in algs)
            su = " / ".join(f"{g(r['su'][a]):.2f}" for a in algs)
            secs = " / ".join(f"{statistics.mean(r['t'][a]):.2f}" for a in algs)
            print(f"| {s} | {p4} + {cel} | {len(files)} | {ratio} | {su} | {secs} s |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
