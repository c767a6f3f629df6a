#!/usr/bin/env python3
"""Map the MPI communication graphs of ../shared/data/mpi_comm_graphs with taskmap and Scotch.

The graphs are mpiP volumes of real proxy-app runs (`*graphStats.txt.gz`, read directly by
taskmap); Scotch gets the same graph converted to `.grf`. Every mapping is scored by
`taskmap eval` (f_C, and whether the loads keep the 3 % bound). CoMD, NPB ep and NPB ft
are left out: mpiP saw only rank-0 stars there (see the data README).

  bench/mpi_graphs.py                                 # ~1000-rank runs onto torus:8x8x16
  bench/mpi_graphs.py --ranks 64 --targets "torus:4x4x4;tree:4:16/1:10"
  bench/mpi_graphs.py --preset strong --seed 2

Prints one line per (graph, target, tool) and the geometric means of taskmap / Scotch.
Needs `apt-get install scotch` (scotch_gmap or gmap) and a release build of taskmap
(TASKMAP=path overrides target/release/taskmap).
"""

import argparse
import glob
import json
import math
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import TM, ROOT, evaluate, geomean, timed  # noqa: E402

DATA = os.path.join(ROOT, "..", "shared", "data", "mpi_comm_graphs", "graphs")
STARS = ("CoMD", "NPB-ep", "NPB-ft")


def scale_grf(src, dst, diameter):
    """Writes src (a Scotch graph from `taskmap convert`) to dst with every edge weight
    divided by s and rounded (at least 1), s the smallest integer that brings
    max weight x diameter to 2^27 or below, and returns s. Scotch 7.0.3 (Debian's
    scotch_gmap, int32 and int64 alike) crashes or hangs on the raw mpiP volumes (NPB bt
    onto torus:8x8x16, weights up to 8.9e7), and maps them once they are scaled down;
    its mapping is then scored on the original weights."""
    lines = open(src).read().split("\n")
    if lines[2].split()[1][-2] != "1":
        # No edge weights (all 1): nothing to scale.
        shutil.copyfile(src, dst)
        return 1
    rows = [l.split() for l in lines[3:] if l.strip()]
    wmax = max((int(t[1 + 2 * i]) for t in rows for i in range(int(t[0]))), default=1)
    s = max(1, -(-wmax * diameter // (1 << 27)))
    out = lines[:3]
    for t in rows:
        d = int(t[0])
        r = [t[0]]
        for i in range(d):
            r += [str(max(1, round(int(t[1 + 2 * i]) / s))), t[2 + 2 * i]]
        out.append(" ".join(r))
    open(dst, "w").write("\n".join(out) + "\n")
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", choices=["64", "1000"], default="1000",
                    help="the 64-rank runs or the ~1000-rank ones (1000, 1024 or 1152 ranks)")
    ap.add_argument("--targets", default="torus:8x8x16",
                    help="semicolon-separated target specs")
    ap.add_argument("--preset", default="default", help="taskmap's -P preset")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    gmap = shutil.which("scotch_gmap") or shutil.which("gmap")
    def ranks(f):
        return int(re.search(r"_(\d+)ranks\.", os.path.basename(f)).group(1))

    files = sorted(f for f in glob.glob(os.path.join(DATA, "*ranks.graphStats.txt.gz"))
                   if not os.path.basename(f).startswith(STARS)
                   and (ranks(f) == 64 if args.ranks == "64" else ranks(f) >= 1000))
    if not files:
        sys.exit("no graphs under " + DATA)
    print("taskmap %s, preset %s, seed %d, one thread; Scotch: %s" % (TM, args.preset, args.seed, gmap))
    print("%-24s %-16s %-8s %16s %4s %8s" % ("graph", "target", "tool", "f_C", "bal", "time_s"))
    fc_ratios, t_ratios, failed = [], [], []
    with tempfile.TemporaryDirectory() as work:
        for f in files:
            name = re.sub(r"\.graphStats\.txt\.gz$", "", os.path.basename(f))
            grf = os.path.join(work, name + ".grf")
            timed([TM, "convert", f, grf])
            for spec in args.targets.split(";"):
                out = os.path.join(work, "tm.map")
                _, t, _ = timed([TM, "map", "-g", f, "-a", spec, "-P", args.preset, "-s", str(args.seed),
                                 "-o", out, "--quiet"])
                fc, bal = evaluate(grf, spec, out)
                print("%-24s %-16s %-8s %16d %4s %8.2f" % (name, spec, "taskmap", fc, "ok" if bal else "NO", t),
                      flush=True)
                if not gmap:
                    continue
                tgt = os.path.join(work, "t.tgt")
                tgt_text, _, _ = timed([TM, "arch", spec, "--scotch"])
                open(tgt, "w").write(tgt_text)
                arch, _, _ = timed([TM, "arch", spec, "-f", "json"])
                sgrf = os.path.join(work, "scaled.grf")
                scale = scale_grf(grf, sgrf, json.loads(arch)["diameter"])
                smap = os.path.join(work, "s.map")
                if os.path.exists(smap):
                    os.remove(smap)
                try:
                    _, ts, _ = timed(["timeout", "120", gmap, "-b0.03", sgrf, tgt, smap])
                    if not os.path.exists(smap) or os.path.getsize(smap) == 0:
                        # `timed` lets exit 1 through (taskmap's "infeasible"); for Scotch
                        # it is an error, after which it wrote no mapping.
                        raise RuntimeError("scotch: no mapping written")
                except RuntimeError as e:
                    # A crash or a hang (120 s) of Scotch.
                    print("%-24s %-16s %-8s %s" % (name, spec, "scotch", str(e).split(": ")[0][-40:]), flush=True)
                    failed.append("%s on %s" % (name, spec))
                    continue
                sfc, sbal = evaluate(grf, spec, smap)
                print("%-24s %-16s %-8s %16d %4s %8.2f  (weights / %d)"
                      % (name, spec, "scotch", sfc, "ok" if sbal else "NO", ts, scale), flush=True)
                fc_ratios.append(fc / max(sfc, 1))
                t_ratios.append(max(t, 0.005) / max(ts, 0.005))
    if fc_ratios:
        print("\ntaskmap vs Scotch over %d runs: geomean f_C ratio %.4f (worst %.4f), geomean time ratio %.4f"
              % (len(fc_ratios), geomean(fc_ratios), max(fc_ratios), geomean(t_ratios)))
    if failed:
        print("Scotch failed on: " + ", ".join(failed))


if __name__ == "__main__":
    main()
