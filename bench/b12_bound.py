#!/usr/bin/env python3
"""How low can f_C go for b12 on a 6x6 torus with at most 40 tasks per PE (Berger et al.)?

Partitions b12 into 36 parts of at most 40 tasks with KaHIP (`pip install kahip`; kaffpa
strong and strongsocial, 5 seeds each). For every partition it prints
  * the edge cut (every cut edge costs at least 1),
  * a lower bound on f_C for ANY placement of those 36 parts on the torus: seen from one
    PE, the other 35 lie at distances 1 (4 PEs), 2 (8), 3 (10), 4 (8), 5 (4), 6 (1); by the
    rearrangement inequality a part pays at least its neighbour parts' weights, sorted
    heaviest first, times those distances, sorted nearest first; half the sum over parts,
  * the f_C of a placement found by simulated annealing on the 36x36 quotient matrix.
Run from the repository root after `cargo build --release -p taskmap-cli`.
"""
import math
import os
import random
import subprocess
import sys
import tempfile

import kahip

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TM = os.path.join(ROOT, "target", "release", "taskmap")
DATA = os.environ.get("DATA", os.path.join(ROOT, "..", "shared", "data"))
BENCH = os.path.join(DATA, "itc99", "b12.bench")
K, SIDE, CAP = 36, 6, 40


def read_metis(path):
    """A METIS graph with optional vertex and edge weights (fmt 0, 1, 10, 11; one
    constraint): (n, xadj, adjncy, edge weights, vertex weights)."""
    lines = [l for l in open(path) if not l.startswith("%")]
    head = lines[0].split()
    n = int(head[0])
    fmt = head[2].rjust(3, "0") if len(head) > 2 else "000"
    has_vw, has_ew = fmt[1] == "1", fmt[2] == "1"
    xadj, adj, ew, vw = [0], [], [], []
    for i in range(n):
        t = list(map(int, lines[1 + i].split()))
        if has_vw:
            vw.append(t[0])
            t = t[1:]
        else:
            vw.append(1)
        step = 2 if has_ew else 1
        for j in range(0, len(t), step):
            adj.append(t[j] - 1)
            ew.append(t[j + 1] if has_ew else 1)
        xadj.append(len(adj))
    return n, xadj, adj, ew, vw


def torus_dist(a, b):
    dx, dy = abs(a % SIDE - b % SIDE), abs(a // SIDE - b // SIDE)
    return min(dx, SIDE - dx) + min(dy, SIDE - dy)


def anneal(w, d, rng, steps=60000):
    pl = list(range(K))
    rng.shuffle(pl)
    cost = sum(w[a][b] * d[pl[a]][pl[b]] for a in range(K) for b in range(K)) // 2
    best, temp = cost, 20.0
    for _ in range(steps):
        a, b = rng.randrange(K), rng.randrange(K)
        if a == b:
            continue
        delta = sum((w[a][x] - w[b][x]) * (d[pl[b]][pl[x]] - d[pl[a]][pl[x]])
                    for x in range(K) if x != a and x != b)
        if delta <= 0 or rng.random() < math.exp(-delta / temp):
            pl[a], pl[b] = pl[b], pl[a]
            cost += delta
            best = min(best, cost)
        temp *= 0.9999
    return best


def main():
    with tempfile.TemporaryDirectory() as tmp:
        g = os.path.join(tmp, "b12.graph")
        subprocess.run([TM, "convert", BENCH, g], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        n, xadj, adj, ew, vw = read_metis(g)
    d = [[torus_dist(a, b) for b in range(K)] for a in range(K)]
    ladder = sorted(d[0][1:])
    imbalance = CAP * K / sum(vw) - 1
    print("%-16s %6s %14s %12s" % ("partition", "cut", "f_C bound", "f_C placed"))
    lows = []
    for mode, name in ((2, "strong"), (5, "strongsocial")):
        for seed in range(5):
            cut, part = kahip.kaffpa(vw, xadj, ew, adj, K, imbalance, True, seed, mode)
            loads = [0] * K
            for v, p in enumerate(part):
                loads[p] += vw[v]
            assert max(loads) <= CAP, "partition over capacity"
            w = [[0] * K for _ in range(K)]
            for v in range(n):
                for e in range(xadj[v], xadj[v + 1]):
                    if part[adj[e]] != part[v]:
                        w[part[v]][part[adj[e]]] += ew[e]
            bound = sum(sum(x * y for x, y in zip(sorted(row, reverse=True), ladder))
                        for row in w) / 2
            placed = anneal(w, d, random.Random(seed))
            lows.append(bound)
            print("%-16s %6d %14.0f %12d" % ("%s/%d" % (name, seed), cut, bound, placed))
    print("smallest bound over these partitions: %.0f (half of Berger et al.'s best, 1,188: 594)"
          % min(lows))


if __name__ == "__main__":
    sys.exit(main())
