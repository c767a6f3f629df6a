#!/usr/bin/env python3
"""Refining a given mapping (`taskmap map --initial`) against mapping from scratch, in the
situation of a job-launch loop: the program changed a little since it was last mapped.

For each instance: map G (the default multilevel run) -> M0. Perturb G into G' (a share
of its edges, 10 % by default, get their weight multiplied by 2 to 4; seed 1). Then, on G':
  * keep: M0 as it is;
  * scratch: the default run on G';
  * refine: `--initial M0` on G';
  * Scotch: `scotch_gmap` on G', and that mapping refined with `--initial`;
  * with `--migration C1,C2,...`: `--initial M0 --migration-cost C` for each C (a second
    table: f_C, the tasks moved, the hops moved and f_C + C · hops).
Prints f_C, the mapper's own time (JSON `map_time_ms`; Scotch: the whole process) and the
share of tasks on another PE than in M0 (for Scotch's refinement: than in Scotch's
mapping).

    python3 bench/refine.py [--share 0.1] [--only NAME] [--migration 1,4,16]

Needs the release binary (cargo build --release), or TASKMAP=path; Scotch optional.
"""

import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TM = os.environ.get("TASKMAP", os.path.join(ROOT, "target", "release", "taskmap"))
DATA = os.path.join(ROOT, "..", "shared", "data")

# (name, graph, target, extra map arguments)
INSTANCES = [
    ("b17_opt", "itc99/b17_opt.bench.gz", "torus:16x16", ["--capacity", "100"]),
    ("fe_4elt2", "walshaw/graphs/fe_4elt2.graph.gz", "torus:8x8", []),
    ("wing", "walshaw/graphs/wing.graph.gz", "mesh:16x16", []),
    ("fe_body", "walshaw/graphs/fe_body.graph.gz", "tree:4:8:4/1:10:100", []),
    ("uk", "walshaw/graphs/uk.graph.gz", "hypercube:6", []),
]


def tm(args):
    p = subprocess.run([TM] + args, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"taskmap failed: {' '.join(args)}\n{p.stderr}")
    return p.stdout


def read_metis(path):
    """(n, rows of (neighbour, weight), vertex-weight lines or None) of a METIS graph."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = [l for l in f if not l.startswith("%")]
    head = lines[0].split()
    n = int(head[0])
    fmt = head[2].rjust(3, "0") if len(head) > 2 else "000"
    ncon = int(head[3]) if len(head) > 3 else 1
    has_vw, has_ew = fmt[1] == "1", fmt[2] == "1"
    rows, vws = [], []
    for i in range(n):
        t = lines[1 + i].split()
        if has_vw:
            vws.append(t[:ncon])
            t = t[ncon:]
        step = 2 if has_ew else 1
        rows.append([(int(t[j]) - 1, int(t[j + 1]) if has_ew else 1) for j in range(0, len(t), step)])
    return n, rows, (vws if has_vw else None), ncon


def perturb(n, rows, share, seed):
    """Edge weights of a share of the edges multiplied by 2-4 (both directions alike)."""
    rng = random.Random(seed)
    factor = {}
    for u in range(n):
        for v, _ in rows[u]:
            if u < v and rng.random() < share:
                factor[(u, v)] = rng.randint(2, 4)
    return [[(v, w * factor.get((min(u, v), max(u, v)), 1)) for v, w in rows[u]] for u in range(n)]


def write_metis(path, n, rows, vws, ncon):
    m = sum(len(r) for r in rows) // 2
    with open(path, "w") as f:
        if vws is None:
            f.write(f"{n} {m} 001\n")
        else:
            f.write(f"{n} {m} 011 {ncon}\n")
        for i, r in enumerate(rows):
            parts = (vws[i] if vws else []) + [f"{v + 1} {w}" for v, w in r]
            f.write(" ".join(parts) + "\n")


def pes(path):
    """The PE of every task in a mapping file (Scotch's or one PE per line)."""
    lines = open(path).read().split("\n")
    rows = [l.split() for l in lines if l.strip()]
    if rows and len(rows[0]) == 1 and len(rows) > 1 and len(rows[1]) == 2:
        rows = rows[1:]
        return [int(r[1]) for r in sorted(rows, key=lambda r: int(r[0]))]
    return [int(r[0]) for r in rows]


def moved(a, b):
    return sum(x != y for x, y in zip(a, b)) / len(a)


def run_map(graph, target, extra, out, initial=None, migration=None, report=False):
    args = ["map", "-g", graph, "-a", target, "-o", out, "-f", "json", "--quiet"] + extra
    if initial:
        args += ["--initial", initial]
    if migration is not None:
        args += ["--migration-cost", str(migration)]
    r = json.loads(tm(args))
    if report:
        return r
    return r["evaluation"]["comm_cost"], r["map_time_ms"] / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--share", type=float, default=0.1)
    ap.add_argument("--only")
    ap.add_argument("--migration", default="", help="comma-separated migration costs")
    args = ap.parse_args()
    costs = [int(c) for c in args.migration.split(",") if c]
    migration_rows = []
    gmap = shutil.which("scotch_gmap") or shutil.which("gmap")
    work = tempfile.mkdtemp()
    print(f"| instance | target | keep M0: f_C | scratch: f_C, time, moved | refine M0: f_C, time, moved | Scotch: f_C, time | Scotch refined: f_C, time, moved |")
    print("|---|---|---|---|---|---|---|")
    for name, rel, target, extra in INSTANCES:
        if args.only and name != args.only:
            continue
        path = os.path.join(DATA, rel)
        g0 = os.path.join(work, name + ".graph")
        tm(["convert", path, g0])
        n, rows, vws, ncon = read_metis(g0)
        g1 = os.path.join(work, name + "_p.graph")
        write_metis(g1, n, perturb(n, rows, args.share, 1), vws, ncon)
        m0 = os.path.join(work, name + "_m0.map")
        run_map(g0, target, extra, m0)
        keep = json.loads(tm(["eval", "-g", g1, "-a", target, "-m", m0, "-f", "json"] + extra))["comm_cost"]
        ms = os.path.join(work, name + "_s.map")
        fs, ts = run_map(g1, target, extra, ms)
        mr = os.path.join(work, name + "_r.map")
        fr, tr = run_map(g1, target, extra, mr, m0)
        p0 = pes(m0)
        for c in [0] + costs if costs else []:
            mm = os.path.join(work, f"{name}_mig{c}.map")
            r = run_map(g1, target, extra, mm, m0, migration=c, report=True)
            fc, hops = r["evaluation"]["comm_cost"], r["initial"]["moved_hops"]
            migration_rows.append(
                f"| {name} | {c} | {fc:,} | {100 * moved(p0, pes(mm)):.1f} % | {hops:,} | "
                f"{fc + c * hops:,} | {r['map_time_ms'] / 1e3:.2f} s |")
        row = (f"| {name} | {target} | {keep:,} | {fs:,}, {ts:.2f} s, {100 * moved(p0, pes(ms)):.0f} % "
               f"| {fr:,}, {tr:.2f} s, {100 * moved(p0, pes(mr)):.1f} % ")
        scotch_tgt = tm(["arch", target, "--scotch"]).strip() if gmap else ""
        if gmap and scotch_tgt:
            grf = os.path.join(work, name + "_p.grf")
            tm(["convert", g1, grf])
            tgt = os.path.join(work, name + ".tgt")
            open(tgt, "w").write(scotch_tgt + "\n")
            bal = "0.03"
            if "--capacity" in extra:
                cap = int(extra[extra.index("--capacity") + 1])
                k = next(int(l.split()[1]) for l in tm(["arch", target]).splitlines()
                         if l.startswith("PEs"))
                bal = f"{cap * k / n - 1:.6f}"
            msc = os.path.join(work, name + "_scotch.map")
            t0 = time.time()
            subprocess.run([gmap, f"-b{bal}", grf, tgt, msc], check=True, capture_output=True)
            tsc = time.time() - t0
            fsc = json.loads(tm(["eval", "-g", g1, "-a", target, "-m", msc, "-f", "json"] + extra))["comm_cost"]
            mscr = os.path.join(work, name + "_scotch_r.map")
            fscr, tscr = run_map(g1, target, extra, mscr, msc)
            row += (f"| {fsc:,}, {tsc:.2f} s | {fscr:,}, {tscr:.2f} s, "
                    f"{100 * moved(pes(msc), pes(mscr)):.1f} % |")
        else:
            row += "| - | - |"
        print(row, flush=True)
    if migration_rows:
        print()
        print("| instance | migration cost C | f_C | moved | hops moved | f_C + C · hops | time |")
        print("|---|---|---|---|---|---|---|")
        print("\n".join(migration_rows))


if __name__ == "__main__":
    main()
