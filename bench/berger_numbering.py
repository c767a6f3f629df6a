#!/usr/bin/env python3
"""How much the task numbering moves the Berger et al. heuristics.

GTWP and Subgraph break ties by task order (the start task, FIFO ties in Q, the
breadth-first order, the degree order), so renumbering the tasks of one graph changes
their mappings. For every instance of `bench/berger.py` up to `--max-tasks` tasks, this
writes the graph with its tasks renumbered by a random permutation (seeds 1..N; the
neighbours of a task listed by increasing new id), maps it with each algorithm, and prints
the spread of f_C over the N numberings next to the value of the file's own numbering and
the published value.

Usage (from the repository root):
    bench/berger_numbering.py [--runs 40] [--algs gtwp,subgraph] [--only b12,grid23x23]
                              [--max-tasks 10000]
    TASKMAP=/path/to/taskmap bench/berger_numbering.py
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berger import DATA, INSTANCES, PUBLISHED, TM  # noqa: E402


def read_metis(path):
    """(n, fmt, per task (vertex-weight tokens, [(neighbour 0-based, weight token)]))."""
    with open(path) as f:
        lines = [l for l in f if not l.startswith("%")]
    head = lines[0].split()
    n, fmt = int(head[0]), (head[2] if len(head) > 2 else "0")
    fmt = fmt.rjust(3, "0")
    ncon = (int(head[3]) if len(head) > 3 else 1) if fmt[1] == "1" else 0
    tasks = []
    for i in range(n):
        tok = lines[1 + i].split()
        vw, rest = tok[:ncon], tok[ncon:]
        if fmt[2] == "1":
            adj = [(int(rest[j]) - 1, rest[j + 1]) for j in range(0, len(rest), 2)]
        else:
            adj = [(int(x) - 1, None) for x in rest]
        tasks.append((vw, adj))
    return head, tasks


def write_renumbered(head, tasks, seed, path):
    n = len(tasks)
    new_of = list(range(n))
    random.Random(seed).shuffle(new_of)
    old_of = [0] * n
    for old, new in enumerate(new_of):
        old_of[new] = old
    out = [" ".join(head)]
    for new in range(n):
        vw, adj = tasks[old_of[new]]
        toks = list(vw)
        for u, w in sorted((new_of[u], w) for u, w in adj):
            toks.append(str(u + 1))
            if w is not None:
                toks.append(w)
        out.append(" ".join(toks))
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def fc(graph, side, cap, alg):
    p = subprocess.run([TM, "map", "-g", graph, "-a", f"torus:{side}x{side}", "--capacity",
                        str(cap), "-A", alg, "-f", "json", "--quiet"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    return json.loads(p.stdout)["evaluation"]["comm_cost"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--algs", default="gtwp,subgraph")
    ap.add_argument("--only")
    ap.add_argument("--max-tasks", type=int, default=10000)
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    print("| instance | algorithm | published | file's numbering | renumbered: min | "
          "quartiles | max |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, src, side, cap, _ in INSTANCES:
            if only and name not in only:
                continue
            base = os.path.join(tmp, name + ".graph")
            if src is None:
                s = int(name[4:].split("x")[0])
                subprocess.run([TM, "gen", "grid", f"{s}x{s}", "-o", base], check=True,
                               capture_output=True)
            else:
                subprocess.run([TM, "convert", os.path.join(DATA, src), base], check=True,
                               capture_output=True)
            head, tasks = read_metis(base)
            if len(tasks) > a.max_tasks:
                continue
            for alg in a.algs.split(","):
                own = fc(base, side, cap, alg)
                vals = []
                for seed in range(1, a.runs + 1):
                    g = os.path.join(tmp, "renumbered.graph")
                    write_renumbered(head, tasks, seed, g)
                    vals.append(fc(g, side, cap, alg))
                vals.sort()
                q = lambda f: vals[min(len(vals) - 1, int(f * len(vals)))]
                pub = PUBLISHED.get(name, {}).get(alg, ("-",))[0]
                print(f"| {name} | {alg} | {pub} | {own:,} | {vals[0]:,} | "
                      f"{q(0.25):,} / {q(0.5):,} / {q(0.75):,} | {vals[-1]:,} |", flush=True)


if __name__ == "__main__":
    main()
