#!/usr/bin/env python3
"""Monte Carlo T_REAL against the expected-value reading (`taskmap amap --monte-carlo`).

The expected-value reading schedules G' once, every module for its expected time
m' = m·f. The Monte Carlo mode runs the stochastic program itself many times on the same
assignment and reports the mean T_REAL with a 95 % confidence interval. This script
compares the two on:

- the Kasahara STG graphs (../shared/data/stg), as given (every task runs once: the two
  must agree) and with retries: a seeded 20 % of the tasks repeat with probability 0.5
  (an `EOR` loop back to the task, mean 2 executions), the rest of the program waiting for
  the last one;
- chains of `EOR` diamonds (bench/gen_amg.py --diamonds) and the realtime fixture.

Each graph is mapped by -A alloc-ls onto 8 processors on a Banyan (communication /
computation 0.1 for the STG graphs, ITU time 0.05 for the diamonds), then run --runs times.

    python3 bench/amap_montecarlo.py [--sets app,rnc50,rnc100] [--limit 10] [--runs 1000]

Needs the release binary (cargo build --release), or TASKMAP=path.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hetero_stg import read_stg, run  # noqa: E402
from gen_amg import diamonds  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data", "stg")


def stg_amg(recs, itus, retry, seed):
    """The .amg text of an STG graph: a module per task of time > 0 or with arcs, a link of
    `itus` ITUs per arc; with `retry`, a share of the tasks repeats with probability 0.5
    (task -> itself, and a 0-time module `done` that passes control on)."""
    r = random.Random(seed)
    succ = [[] for _ in recs]
    for j, (_, preds) in enumerate(recs):
        for p in preds:
            succ[p].append(j)
    lines, links = [], []
    for i, (t, preds) in enumerate(recs):
        again = retry > 0 and succ[i] and r.random() < retry
        if again:
            lines.append(f"MODULE t{i} {t} out=eor")
            lines.append(f"MODULE d{i} 0")
            links.append(f"LINK t{i} t{i} 0 0.5")
            links.append(f"LINK t{i} d{i} 0 0.5")
            src = f"d{i}"
        else:
            lines.append(f"MODULE t{i} {t}")
            src = f"t{i}"
        for j in succ[i]:
            links.append(f"LINK {src} t{j} {itus}")
    return "\n".join(lines + links) + "\n"


def amap(path, runs, extra):
    out, secs = run(["amap", "-g", path, "-k", "8", "--system", "banyan", "-A", "alloc-ls",
                     "--monte-carlo", str(runs), "-f", "json", "--threads", "2"] + extra)
    mc = out["monte_carlo"]
    return out["t_real"], mc, secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="app,rnc50,rnc100")
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    cases = []  # (set, variant, path, extra args)
    for s in args.sets.split(","):
        d = os.path.join(DATA, s)
        files = sorted(f for f in os.listdir(d) if ".stg" in f)[: args.limit]
        for f in files:
            recs = read_stg(os.path.join(d, f))
            work = sum(t for t, _ in recs)
            n = sum(1 for t, _ in recs if t > 0) or 1
            itus = max(0, round(0.1 * work / n))
            for variant, retry in (("as given", 0.0), ("20 % retried", 0.2)):
                path = os.path.join(tmp, f"{s}-{f}-{retry}.amg")
                with open(path, "w") as fh:
                    fh.write(stg_amg(recs, itus, retry, seed=len(cases) + 1))
                cases.append((s, variant, path, ["--itu-time", "1"]))
    for n in (400, 4000):
        path = os.path.join(tmp, f"diamonds{n}.amg")
        with open(path, "w") as fh:
            fh.write("\n".join(diamonds(n, random.Random(7))) + "\n")
        cases.append((f"diamonds {n}", "EOR", path, ["--itu-time", "0.05"]))
    cases.append(("realtime fixture", "EOR + loop",
                  os.path.join(ROOT, "fixtures", "amap", "realtime.amg"), ["--itu-time", "0.1"]))
    groups = {}
    for s, variant, path, extra in cases:
        groups.setdefault((s, variant), []).append(amap(path, args.runs, extra))
    print(f"{args.runs} runs per graph; -A alloc-ls on banyan, k = 8")
    print()
    print("| graphs | variant | count | expected-value T_REAL / Monte Carlo mean (mean, min, max) "
          "| CI half-width / mean (max) | time (max) |")
    print("|---|---|---|---|---|---|")
    for (s, variant), rows in groups.items():
        ratio = [e / mc["mean"] for e, mc, _ in rows]
        half = [(mc["ci95"][1] - mc["ci95"][0]) / 2 / mc["mean"] for _, mc, _ in rows]
        print(f"| {s} | {variant} | {len(rows)} | {statistics.mean(ratio):.4f}, {min(ratio):.4f}, "
              f"{max(ratio):.4f} | {100 * max(half):.2f} % | {max(t for _, _, t in rows):.2f} s |")


if __name__ == "__main__":
    main()
