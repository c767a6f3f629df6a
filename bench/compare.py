#!/usr/bin/env python3
"""Compare taskmap with the installed peers on the issue-3 suite.

For every instance and target it runs taskmap and the peers, each reading its own file
format of the same graph, scores every mapping with `taskmap eval` (so f_C is computed one
way for all), and prints f_C, balance, whole-process wall time and peak memory, then the
geometric means of the ratios to Scotch, and of taskmap's ratios to every other peer that
ran (KaHIP on the tree targets: the strong preset's goal), also over only the runs where
that peer kept the balance.

Peers (skipped when not installed):
  scotch   `scotch_gmap -b0.03` (or `gmap`), one thread            apt-get install scotch
  kahip    `global_multisection --preconfiguration=eco`, tree targets only   pip install kahip
  mtkahypar  mapping onto the target's link graph (Steiner-tree objective, which on
             graphs is f_C with shortest-path distances), targets of at most 64 PEs      pip install mtkahypar

Usage (from the repository root):
  bench/compare.py                      # the whole suite, default preset, one thread
  bench/compare.py --quick              # a small subset
  bench/compare.py --preset strong --threads 2
  bench/compare.py --instances add20,3elt --targets "torus:16x16;wcomplete:1,2,3,4"
  bench/compare.py --repeat 5           # every tool 5 times per instance and target
  TASKMAP=/path/to/taskmap bench/compare.py   # that binary, not a fresh release build

With --repeat N every tool runs N times: taskmap with seeds --seed .. --seed+N-1, KaHIP
with --seed=0..N-1, Mt-KaHyPar with seeds 0..N-1, and Scotch with its own random seed
(the Debian build draws a new one per run: `crack` onto `tree:4:8:6/1:10:100` gave f_C
77,207 to 80,028 over six runs). Rows then give the median f_C and the median time, the
largest peak memory, "ok" only when every run kept the balance, and the smallest and
largest f_C; the ratios are those of the medians.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("DATA", os.path.join(ROOT, "..", "shared", "data"))
TM = os.environ.get("TASKMAP") or os.path.join(ROOT, "target", "release", "taskmap")

WALSHAW = ("add20 data 3elt uk add32 bcsstk33 whitaker3 crack wing_nodal fe_4elt2 vibrobox "
           "bcsstk29 4elt fe_sphere cti memplus cs4 fe_pwt fe_body t60k wing finan512").split()
QUICK = ["add20", "3elt", "4elt", "crack", "delaunay_n15", "b17_opt", "grid100x100"]

TARGETS = [
    "torus:8x8",
    "torus:16x16",
    "mesh:8x8x8",
    "hypercube:8",
    "tree:4:8:6/1:10:100",
    "tree:4:8:8/1:10:100",
    "tree:4:16:16/1:10:100",
    "wcomplete:" + ",".join(str(1 + (i % 4)) for i in range(32)),
]


def instances():
    out = {}
    for g in WALSHAW:
        out[g] = os.path.join(DATA, "walshaw", "graphs", g + ".graph.gz")
    out["delaunay_n15"] = os.path.join(DATA, "dimacs10", "delaunay_n15.graph.gz")
    out["rgg_n_2_15_s0"] = os.path.join(DATA, "dimacs10", "rgg_n_2_15_s0.graph.gz")
    out["b17_opt"] = os.path.join(DATA, "itc99", "b17_opt.bench.gz")
    out["grid100x100"] = ("gen", "grid", "100x100")
    out["grid1000x1000"] = ("gen", "grid", "1000x1000")
    out["grid100x100x100"] = ("gen", "grid", "100x100x100")
    return out


def timed(cmd, **kw):
    """Runs cmd under /usr/bin/time; returns (stdout, seconds, peak KiB)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        p = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", tf.name] + cmd,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
        t, m = open(tf.name).read().split()[-2:]
    if p.returncode not in (0, 1):
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr[-500:]))
    return p.stdout, float(t), int(m)


def evaluate(graph, spec, mapping):
    p = subprocess.run([TM, "eval", "-g", graph, "-a", spec, "-m", mapping, "--epsilon", "0.03",
                        "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        raise RuntimeError("eval failed: " + p.stderr)
    e = json.loads(p.stdout)
    return e["comm_cost"], e["balanced"]


def tree_parts(spec):
    if not spec.startswith("tree:"):
        return None
    counts, dists = spec[5:].split("/")
    return counts, dists


def pe_count(spec):
    p = subprocess.run([TM, "arch", spec, "--format", "json"], stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(p.stdout)["pes"]


def target_graph_metis(spec, path):
    """Writes the target's link graph (neighbouring PEs at distance 1) as METIS, for Mt-KaHyPar."""
    k = pe_count(spec)
    p = subprocess.run([TM, "arch", spec, "--links"], stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return False
    edges = [tuple(map(int, line.split())) for line in p.stdout.splitlines() if line.strip()]
    adj = [[] for _ in range(k)]
    for a, b, w in edges:
        adj[a].append((b, w))
        adj[b].append((a, w))
    with open(path, "w") as f:
        f.write("%d %d 1\n" % (k, len(edges)))
        for row in adj:
            f.write(" ".join("%d %d" % (b + 1, w) for b, w in row) + "\n")
    return True


MTK_SCRIPT = r"""
import sys, time, mtkahypar
graph, target, k, eps, out, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5], int(sys.argv[6])
mk = mtkahypar.initialize(threads, False)
if hasattr(mtkahypar, "set_seed"):
    mtkahypar.set_seed(int(sys.argv[7]))
ctx = mk.context_from_preset(mtkahypar.PresetType.DEFAULT)
ctx.set_mapping_parameters(k, eps)
ctx.logging = False
g = mk.graph_from_file(graph, ctx, mtkahypar.FileFormat.METIS)
t = mk.target_graph_from_file(target, ctx, mtkahypar.FileFormat.METIS)
t0 = time.perf_counter()
p = g.map_onto_graph(t, ctx)
print("map_s %.6f" % (time.perf_counter() - t0))
p.write_partition_to_file(out)
"""


def find_kahip():
    """KaHIP's `global_multisection`: on the PATH, or where `pip install kahip` puts it
    (`site-packages/bin/`, which is not on the PATH); None when not installed."""
    kahip = shutil.which("global_multisection")
    if not kahip:
        try:
            import kahip as _k  # noqa: F401
            cand = os.path.join(os.path.dirname(os.path.dirname(_k.__file__)), "bin", "global_multisection")
            kahip = cand if os.path.exists(cand) else None
        except ImportError:
            kahip = None
    return kahip


def median(xs):
    xs = sorted(xs)
    h = len(xs) // 2
    return xs[h] if len(xs) % 2 else (xs[h - 1] + xs[h]) / 2


def summarise(rs):
    """(f_C, balanced, time, peak) of repeated runs: median f_C and time, every run balanced,
    largest peak."""
    return (median([r[0] for r in rs]), all(r[1] for r in rs), median([r[2] for r in rs]),
            max(r[3] for r in rs))


def run_tools(args, rep, spec, path, metis, grf, work, alg, gmap, kahip, have_mtk, peers):
    """One run of every tool on one instance and target: {tool: (f_C, balanced, s, KiB)}."""
    rows = {}
    out = os.path.join(work, "tm.pes")
    _, t, m = timed([TM, "map", "-g", path, "-a", spec, "-A", alg, "--threads", str(args.threads),
                     "--seed", str(args.seed + rep), "-o", out, "--format", "json"])
    rows["taskmap"] = evaluate(metis, spec, out) + (t, m)
    if gmap and "scotch" in peers:
        tgt = os.path.join(work, "t.tgt")
        p = subprocess.run([TM, "arch", spec, "--scotch"], stdout=subprocess.PIPE, text=True, check=True)
        open(tgt, "w").write(p.stdout)
        smap = os.path.join(work, "s.map")
        _, t, m = timed([gmap, "-b0.03", grf, tgt, smap])
        rows["scotch"] = evaluate(metis, spec, smap) + (t, m)
    tp = tree_parts(spec)
    if kahip and tp and "kahip" in peers:
        kout = os.path.join(work, "k.part")
        _, t, m = timed([kahip, metis, "--preconfiguration=eco", "--imbalance=3", "--seed=%d" % rep,
                         "--hierarchy_parameter_string=" + tp[0],
                         "--distance_parameter_string=" + tp[1], "--output_filename=" + kout])
        rows["kahip"] = evaluate(metis, spec, kout) + (t, m)
    if have_mtk and "mtkahypar" in peers and pe_count(spec) <= 64 and not spec.startswith("wcomplete"):
        tgraph = os.path.join(work, "target.graph")
        if target_graph_metis(spec, tgraph):
            mout = os.path.join(work, "m.part")
            _, t, m = timed([sys.executable, "-c", MTK_SCRIPT, metis, tgraph, str(pe_count(spec)),
                             "0.03", mout, str(args.threads), str(rep)])
            rows["mtkahypar"] = evaluate(metis, spec, mout) + (t, m)
    return rows


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a small subset of the suite")
    ap.add_argument("--instances", help="comma-separated instance names")
    ap.add_argument("--targets", help="semicolon-separated target specs")
    ap.add_argument("--preset", default="default", help="taskmap multilevel preset")
    ap.add_argument("--algorithm", default=None, help="taskmap algorithm (overrides --preset)")
    ap.add_argument("--threads", type=int, default=1, help="taskmap threads")
    ap.add_argument("--peers", default="scotch,kahip,mtkahypar")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool, instance and target")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")

    if not os.environ.get("TASKMAP"):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "taskmap-cli"], cwd=ROOT, check=True)
    gmap = shutil.which("scotch_gmap") or shutil.which("gmap")
    kahip = find_kahip()
    try:
        import mtkahypar  # noqa: F401
        have_mtk = True
    except ImportError:
        have_mtk = False
    peers = set(args.peers.split(","))

    insts = instances()
    names = args.instances.split(",") if args.instances else (QUICK if args.quick else list(insts))
    targets = args.targets.split(";") if args.targets else TARGETS
    alg = args.algorithm or "multilevel,preset=" + args.preset
    work = tempfile.mkdtemp(prefix="taskmap-bench-")
    print("taskmap algorithm %s, threads %d; Scotch: %s; KaHIP: %s; Mt-KaHyPar: %s" % (
        alg, args.threads, gmap or "missing", kahip or "missing", "yes" if have_mtk else "missing"))
    hdr = "%-16s %-24s %-10s %12s %4s %8s %9s" % ("instance", "target", "tool", "f_C", "bal", "time_s", "peak_MiB")
    print(hdr)
    ratios = {"taskmap": ([], []), "kahip": ([], []), "mtkahypar": ([], [])}
    # taskmap against each other peer: (f_C ratio, time ratio, the peer kept the balance).
    vs_peer = {"kahip": [], "mtkahypar": []}
    worst = (0.0, None)
    try:
        for name in names:
            src = insts[name]
            if isinstance(src, tuple):
                path = os.path.join(work, name + ".graph")
                subprocess.run([TM, "gen", src[1], src[2], "-o", path], check=True, stderr=subprocess.DEVNULL)
            else:
                path = src
                if not os.path.exists(path):
                    print("%-16s missing %s" % (name, path))
                    continue
            # Each tool reads its own format: METIS (plain) for KaHIP/Mt-KaHyPar, .grf for Scotch.
            metis = os.path.join(work, name + ".metis.graph")
            grf = os.path.join(work, name + ".grf")
            subprocess.run([TM, "convert", path, metis], check=True, stderr=subprocess.DEVNULL)
            subprocess.run([TM, "convert", path, grf], check=True, stderr=subprocess.DEVNULL)
            for spec in targets:
                runs = {}
                for rep in range(args.repeat):
                    for tool, row in run_tools(args, rep, spec, path, metis, grf, work, alg, gmap, kahip,
                                               have_mtk, peers).items():
                        runs.setdefault(tool, []).append(row)
                rows = {tool: summarise(rs) for tool, rs in runs.items()}
                for tool, (fc, bal, t, m) in rows.items():
                    spread = ""
                    if args.repeat > 1:
                        fcs = [r[0] for r in runs[tool]]
                        spread = " %10d..%d" % (min(fcs), max(fcs))
                    print("%-16s %-24s %-10s %12d %4s %8.3f %9.1f%s" % (
                        name, spec[:24], tool, fc, "ok" if bal else "NO", t, m / 1024.0, spread))
                for peer, acc in vs_peer.items():
                    if peer in rows and rows[peer][0] > 0:
                        pfc, pbal, pt, _ = rows[peer]
                        acc.append((rows["taskmap"][0] / pfc, rows["taskmap"][2] / max(pt, 0.01), pbal))
                if "scotch" in rows:
                    sfc, _, st, _ = rows["scotch"]
                    for tool in ("taskmap", "kahip", "mtkahypar"):
                        if tool in rows and sfc > 0:
                            ratios[tool][0].append(rows[tool][0] / sfc)
                            ratios[tool][1].append(rows[tool][2] / max(st, 0.01))
                    if sfc > 0:
                        r = rows["taskmap"][0] / sfc
                        if r > worst[0]:
                            worst = (r, "%s on %s" % (name, spec))
                sys.stdout.flush()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    for tool, (q, t) in ratios.items():
        if q:
            print("%-10s vs Scotch over %3d runs: geomean f_C ratio %.4f, geomean time ratio %.4f" % (
                tool, len(q), geomean(q), geomean(t)))
    if worst[1]:
        print("worst taskmap f_C ratio: %.4f (%s)" % worst)
    for peer, acc in vs_peer.items():
        if acc:
            kept = [r for r in acc if r[2]]
            line = "taskmap vs %-9s over %3d runs: geomean f_C ratio %.4f, geomean time ratio %.4f, taskmap lower on %d" % (
                peer, len(acc), geomean([r[0] for r in acc]), geomean([r[1] for r in acc]),
                sum(1 for r in acc if r[0] < 1))
            if kept and len(kept) < len(acc):
                line += "; over the %d runs %s kept balanced: %.4f" % (
                    len(kept), peer, geomean([r[0] for r in kept]))
            print(line)


if __name__ == "__main__":
    main()
