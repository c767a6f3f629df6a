#!/usr/bin/env python3
"""Every static mapper's gap to the optimum, on small instances where `-A exact` proves it.

Instances: random graphs (`taskmap gen random N --degree 4`) and Walshaw-derived graphs (the
first N vertices a breadth-first search from vertex 1 reaches in add20, data, 3elt and uk,
with the edges among them), of 12, 16 and 20 tasks, onto complete:4, mesh:2x2,
tree:2:2/1:10, and (16 tasks at most) mesh:2x4 and torus:2x2x2, at the default ε = 0.03.
For each, `taskmap compare -A exact,nodes=NODES` and every mapper `compare` runs by default;
the gap of a mapper is 100 (f_C - opt) / opt against the exact search's bound (its optimum
when proven). Prints one line per instance and target, then per mapper the mean and
largest gap and how often it found the optimum.

Usage: bench/exact_gap.py [--nodes 20000000]   (from the repository root; DATA=../shared/data)
"""
import gzip, json, os, subprocess, sys, tempfile
from collections import defaultdict, deque

NODES = int(sys.argv[sys.argv.index("--nodes") + 1]) if "--nodes" in sys.argv else 20_000_000
DATA = os.environ.get("DATA", "../shared/data")
subprocess.run(["cargo", "build", "--release", "-q", "-p", "taskmap-cli"], check=True)
TM = "target/release/taskmap"
DEFAULT = ["block", "round-robin", "random", "drb", "multilevel", "multilevel,preset=strong",
           "gtwp", "gtwp-fit", "subgraph", "subgraph-dist", "pnp"]
OUT = tempfile.mkdtemp()


def ball(name, n):
    """The induced subgraph of the first n vertices a BFS from vertex 1 reaches."""
    with gzip.open(f"{DATA}/walshaw/graphs/{name}.graph.gz", "rt") as f:
        lines = [l for l in f if not l.startswith("%")]
    adj = [list(map(int, l.split())) for l in lines[1:]]
    seen, order, q = {1}, [1], deque([1])
    while q and len(order) < n:
        u = q.popleft()
        for v in adj[u - 1]:
            if v not in seen and len(order) < n:
                seen.add(v)
                order.append(v)
                q.append(v)
    idx = {v: i + 1 for i, v in enumerate(order)}
    rows = [[idx[v] for v in adj[u - 1] if v in idx] for u in order]
    m = sum(len(r) for r in rows) // 2
    path = f"{OUT}/{name}{n}.graph"
    with open(path, "w") as f:
        f.write(f"{len(order)} {m}\n" + "".join(" ".join(map(str, r)) + "\n" for r in rows))
    return path


def random_graph(n, seed):
    path = f"{OUT}/random{n}s{seed}.graph"
    subprocess.run([TM, "gen", "random", str(n), "--degree", "4", "-s", str(seed), "-o", path,
                    "-q"], check=True, capture_output=True)
    return path


graphs = []
for n in (12, 16, 20):
    for s in (1, 2):
        graphs.append((f"random{n}/s{s}", random_graph(n, s), n))
    for w in ("add20", "data", "3elt", "uk"):
        graphs.append((f"{w}[{n}]", ball(w, n), n))
targets = ["complete:4", "mesh:2x2", "tree:2:2/1:10", "mesh:2x4", "torus:2x2x2"]

gaps = defaultdict(list)
optimal_hits = defaultdict(int)
print(f"{'instance':<14} {'target':<14} {'opt':>6} {'proven':>7} {'exact_s':>8}  "
      "best other mapper (gap %)")
for name, path, n in graphs:
    for t in targets:
        if t in ("mesh:2x4", "torus:2x2x2") and n > 16:
            continue
        r = subprocess.run([TM, "compare", "-g", path, "-a", t, "-A", f"exact,nodes={NODES}",
                            *sum((["-A", a] for a in DEFAULT), []), "-f", "json", "-q"],
                           capture_output=True, text=True)
        rows = json.loads(r.stdout)
        ex = next(x for x in rows if x["algorithm"].startswith("exact"))
        lb, fc = ex["lower_bound"], ex["comm_cost"]
        proven = lb == fc
        others = [x for x in rows if not x["algorithm"].startswith("exact")]
        for x in others:
            if x["gap_percent"] is not None and proven:
                gaps[x["algorithm"]].append(x["gap_percent"])
                optimal_hits[x["algorithm"]] += x["comm_cost"] == fc
        best = min((x for x in others if x["gap_percent"] is not None),
                   key=lambda x: x["gap_percent"])
        print(f"{name:<14} {t:<14} {fc:>6} {'yes' if proven else 'no':>7} "
              f"{ex['time_ms'] / 1e3:>8.2f}  {best['algorithm']} ({best['gap_percent']:.2f})",
              flush=True)

print()
print(f"{'mapper':<16} {'instances':>9} {'optimal':>8} {'mean gap %':>11} {'max gap %':>10}")
for a in DEFAULT:
    g = gaps[a]
    if g:
        print(f"{a:<16} {len(g):>9} {optimal_hits[a]:>8} {sum(g) / len(g):>11.2f} {max(g):>10.2f}")
