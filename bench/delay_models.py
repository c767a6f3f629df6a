#!/usr/bin/env python3
"""The interconnect delay models against a simulation of each queue (`taskmap delay`).

Both readings of the Algorithm Mapper's delay (`--delay-model queue`, the default, and
`--delay-model paper`, the paper's printed formulas) are held against `taskmap delay
--simulate`, which runs the buses, memories and switch paths themselves. The error is
model minus simulation, over the simulation, for the mean active processors AP and the
delay per transfer D.

    python3 bench/delay_models.py             # the table of docs/algorithm-mapper.md
    python3 bench/delay_models.py --grid      # the worst cases over k, B and rho

The table runs `taskmap delay --system S -k K --rho 0.1,0.5,1 --simulate 200000` for each
row, and the same with `--delay-model paper` (the simulation, seed 0, is the same run; it
is made once). --grid searches k = 4, 8, 16, 64, every power-of-two number of buses up to
k (as many memories as processors) and the Banyan network, over a range of loads, and
prints each reading's most optimistic and most pessimistic D with where it occurs.

Needs the release binary (cargo build --release), or TASKMAP=path.
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = [
    ("bus", 4),
    ("bus", 8),
    ("dual-bus", 4),
    ("dual-bus", 8),
    ("multibus:1", 8),
    ("multibus:2", 8),
    ("multibus:8", 16),
    ("multibus:8", 64),
    ("banyan", 8),
    ("banyan", 16),
    ("banyan", 64),
]
GRID_K = [4, 8, 16, 64]
GRID_RHO = [0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0]


def binary():
    path = os.environ.get("TASKMAP") or os.path.join(ROOT, "target", "release", "taskmap")
    if not os.path.isfile(path):
        sys.exit(f"{path}: not found (cargo build --release, or set TASKMAP)")
    return path


def delay(exe, system, k, rhos, reading, transfers=None, seed=0):
    """The rows of `taskmap delay -f json`."""
    args = [exe, "-q", "delay", "--system", system, "-k", str(k), "--rho",
            ",".join(str(r) for r in rhos), "--delay-model", reading, "-s", str(seed),
            "-f", "json"]
    if transfers:
        args += ["--simulate", str(transfers)]
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["rows"]


def errors(exe, system, k, rhos, transfers, seed):
    """Per load: (rho, AP error, D error) in % for the queue and the paper reading."""
    queue = delay(exe, system, k, rhos, "queue", transfers, seed)
    paper = delay(exe, system, k, rhos, "paper")
    out = {}
    for reading, rows in (("queue", queue), ("paper", paper)):
        out[reading] = [
            (q["rho"], 100 * (r["active"] / q["simulated_active"] - 1),
             100 * (r["delay"] / q["simulated_delay"] - 1))
            for q, r in zip(queue, rows)
        ]
    return out


def pct(x):
    """A signed percentage with a true minus sign, one decimal."""
    s = f"{x:+.1f} %"
    return s.replace("-", "\u2212")


def table(exe, transfers, seed, jobs):
    rhos = [0.1, 0.5, 1.0]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        got = list(pool.map(lambda c: errors(exe, c[0], c[1], rhos, transfers, seed), TABLE))
    head = " | ".join(f"\u03c1 = {r:g}: AP, D" for r in rhos)
    print(f"| system | k | reading | {head} |")
    print("|---|---|---|" + "---|" * len(rhos))
    for (system, k), e in zip(TABLE, got):
        for reading in ("queue", "paper"):
            cells = " | ".join(f"{pct(a)}, {pct(d)}" for _, a, d in e[reading])
            print(f"| {system} | {k} | {reading} | {cells} |")


def grid(exe, transfers, seed, jobs, rhos):
    configs = []
    for k in GRID_K:
        b = 1
        while b <= k:
            configs.append((f"multibus:{b}", k))
            b *= 2
        configs.append(("banyan", k))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        got = list(pool.map(lambda c: errors(exe, c[0], c[1], rhos, transfers, seed), configs))
    # worst[(family, reading)] = [most negative D error, where; most positive, where]
    worst = {}
    for (system, k), e in zip(configs, got):
        if system in ("banyan", "multibus:1"):
            family = system
        else:
            family = "multibus (B >= 2)"
        for reading, rows in e.items():
            for rho, a, d in rows:
                w = worst.setdefault((family, reading), [(0.0, None), (0.0, None), (0.0, None)])
                where = f"{system}, k = {k}, rho = {rho:g} (AP {pct(a)})"
                if d < w[0][0]:
                    w[0] = (d, where)
                if d > w[1][0]:
                    w[1] = (d, where)
                if abs(a) > abs(w[2][0]):
                    w[2] = (a, f"{system}, k = {k}, rho = {rho:g}")
    print(f"{len(configs)} systems x {len(rhos)} loads, {transfers} transfers each (seed {seed})")
    print()
    print("| system | k | queue: D error, least to most (\u03c1 of the worst) "
          "| paper: D error, least to most (\u03c1 of the worst) |")
    print("|---|---|---|---|")
    for (system, k), e in zip(configs, got):
        cells = []
        for reading in ("queue", "paper"):
            ds = [(d, rho) for rho, _, d in e[reading]]
            lo, hi = min(ds), max(ds)
            far = lo if abs(lo[0]) >= abs(hi[0]) else hi
            cells.append(f"{pct(lo[0])}, {pct(hi[0])} ({far[1]:g})")
        print(f"| {system} | {k} | {cells[0]} | {cells[1]} |")
    print()
    print("| systems | reading | most optimistic D | most pessimistic D | largest AP error |")
    print("|---|---|---|---|---|")
    for (family, reading), w in sorted(worst.items()):
        cell = lambda x: f"{pct(x[0])} ({x[1]})" if x[1] else "none"
        print(f"| {family} | {reading} | {cell(w[0])} | {cell(w[1])} | {cell(w[2])} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", action="store_true", help="search the worst cases instead")
    ap.add_argument("--rho", default=",".join(str(r) for r in GRID_RHO),
                    help="loads of --grid, comma-separated")
    ap.add_argument("--transfers", type=int, default=200_000, help="simulated per load")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2, help="simulations at once")
    a = ap.parse_args()
    exe = binary()
    if a.grid:
        grid(exe, a.transfers, a.seed, a.jobs, [float(r) for r in a.rho.split(",")])
    else:
        table(exe, a.transfers, a.seed, a.jobs)


if __name__ == "__main__":
    main()
