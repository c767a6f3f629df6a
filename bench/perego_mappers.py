#!/usr/bin/env python3
"""Simulated completion time of De Petris & Perego's greedy mapper against the other mappers.

For the paper's program classes (ring, 2-D mesh, butterfly, reduce tree, random) on mesh,
torus and hypercube targets, maps each program with

  * greedy-perego               (our default: the paper's rules plus the end-game search,
                                 the exchange pass and the simulated exchange passes from
                                 the greedy's and the multilevel mapper's mappings,
                                 docs/simulation.md)
  * greedy-perego,variant=paper (the paper's rules only)
  * multilevel                  (maps the program's task graph by f_C)
  * random                      (balanced random mapping, seed 1)
  * identity                    (task i on PE i, the natural embedding of the generators)

simulates it with `taskmap sim` (default machine parameters) and prints a Markdown table of
completion times in cycles, with the excess over the ideal machine (`taskmap sim --ideal`:
every task on its own PE, distance 1, no contention), and the wall time of the greedy run
(mapping, including the phase model, plus one simulation).

Usage: bench/perego_mappers.py [--quick] [--taskmap PATH]
Builds target/release/taskmap first unless --taskmap is given.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = [
    ("ring:64", "mesh:8x8"),
    ("ring:64", "torus:8x8"),
    ("ring:64", "hypercube:6"),
    ("ring:512", "mesh:16x32"),
    ("ring:512", "torus:8x8x8"),
    ("ring:512", "hypercube:9"),
    ("mesh:8x8", "mesh:8x8"),
    ("mesh:8x8", "torus:8x8"),
    ("mesh:8x8", "hypercube:6"),
    ("mesh:16x16", "hypercube:8"),
    ("mesh:28x28", "mesh:28x28"),
    ("butterfly:6", "mesh:8x8"),
    ("butterfly:6", "torus:8x8"),
    ("butterfly:6", "hypercube:6"),
    ("butterfly:8", "mesh:16x16"),
    ("butterfly:9", "hypercube:9"),
    ("tree:31", "mesh:4x8"),
    ("tree:127", "mesh:8x16"),
    ("tree:127", "torus:8x16"),
    ("tree:127", "hypercube:7"),
    ("tree:511", "mesh:16x32"),
    ("random:64", "mesh:8x8"),
    ("random:64", "torus:8x8"),
    ("random:64", "hypercube:6"),
    ("random:200", "mesh:15x15"),
    ("random:400", "mesh:20x20"),
    ("random:1000", "mesh:32x32"),
]

QUICK = {("ring:64", "mesh:8x8"), ("mesh:8x8", "hypercube:6"), ("butterfly:6", "mesh:8x8"),
         ("tree:127", "mesh:8x16"), ("random:200", "mesh:15x15")}

MAPPERS = [
    ("greedy", ["--algorithm", "greedy-perego"]),
    ("paper", ["--algorithm", "greedy-perego,variant=paper"]),
    ("multilevel", ["--algorithm", "multilevel"]),
    ("random", ["--algorithm", "random"]),
    ("identity", []),
]


def sim(taskmap, gen, extra):
    # Seed 1, as the documented tables were made (the default seed is 0).
    out = subprocess.run([taskmap, "sim", "--gen", gen, "--format", "json", "-s", "1"] + extra,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="five cases only")
    ap.add_argument("--taskmap", help="the taskmap binary (default: build the release one)")
    a = ap.parse_args()
    taskmap = a.taskmap
    if taskmap is None:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "taskmap-cli"],
                       cwd=ROOT, check=True)
        taskmap = os.path.join(ROOT, "target", "release", "taskmap")
    cases = [c for c in CASES if not a.quick or c in QUICK]
    names = [m for m, _ in MAPPERS]
    print("| program | target | ideal | " + " | ".join(names) + " | greedy wall |")
    print("|---|---|---|" + "---|" * len(names) + "---|")
    totals = {m: [] for m in names}
    for gen, arch in cases:
        ideal = sim(taskmap, gen, ["--ideal"])["completion"]
        cells = []
        wall = 0.0
        for name, extra in MAPPERS:
            r = sim(taskmap, gen, ["--arch", arch] + extra)
            c = r["completion"]
            excess = 100.0 * (c / ideal - 1.0)
            totals[name].append(excess)
            cells.append(f"{c} ({excess:+.1f} %)")
            if name == "greedy":
                wall = r["wall_seconds"]
        print(f"| `{gen}` | `{arch}` | {ideal} | " + " | ".join(cells) + f" | {wall:.2f} s |")
        sys.stdout.flush()
    means = " | ".join(f"{sum(v) / len(v):+.1f} %" for v in totals.values())
    print(f"| mean excess | | | {means} | |")


if __name__ == "__main__":
    main()
