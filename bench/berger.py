#!/usr/bin/env python3
"""Reproduces Tables III-VII of Berger et al. 2014 ("Fast generation of large task network
mappings", IPDPSW 2014) with taskmap's GTWP, Subgraph and P&P, the multilevel mapper in
hard-capacity mode and Scotch.

Every run is a separate `taskmap map` (or `scotch_gmap`) process timed as a whole with
`/usr/bin/time -f %e` (seconds, includes reading the graph); every mapping is scored by
`taskmap eval --capacity C` on the square torus of the instance and again on the mesh of
the same size. Scotch has no hard capacity: it gets `-b(C*nodes/tasks - 1)` and its result
is checked against the capacity like the others.

Usage (from the repository root):
    bench/berger.py [--only grid12x12,b12] [--algs gtwp,subgraph,...] [--json out.json]
                    [--markdown out.md] [--seed 0]
    bench/berger.py --algs "multilevel;multilevel,preset=fast"   # ";" when an algorithm
                                                                 # has parameters
    TASKMAP=/path/to/taskmap bench/berger.py    # that binary, not a fresh release build
Needs python3, /usr/bin/time, and Scotch (`scotch_gmap`) for the Scotch column.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("DATA", os.path.join(ROOT, "..", "shared", "data"))
TM = os.environ.get("TASKMAP") or os.path.join(ROOT, "target", "release", "taskmap")

# name, graph (None: generated grid), torus side, capacity, tasks in the paper
INSTANCES = [
    ("grid12x12", None, 2, 40, 144),
    ("grid23x23", None, 4, 40, 529),
    ("grid46x46", None, 8, 40, 2116),
    ("grid100x100", None, 16, 40, 10000),
    ("b12", "itc99/b12.bench", 6, 40, 1065),
    ("b17", "itc99/b17_opt.bench.gz", 16, 100, 24171),
    # The paper's b18 has 114,561 tasks; the nearest netlist available is b18_opt (73,183).
    ("b18", "itc99/b18_opt.bench.gz", 20, 300, 114561),
]

# Published values (their objective, their time), Tables III-VII.
PUBLISHED = {
    "grid12x12": {"pnp": ("37", "0.02 s"), "gtwp": ("41", "2.3 ms"), "subgraph": ("75", "382 µs")},
    "grid23x23": {"pnp": ("220 / 320", "0.05 s"), "gtwp": ("338", "5.2 ms"), "subgraph": ("338", "2.46 ms")},
    "grid46x46": {"pnp": ("2,500", "2 s"), "gtwp": ("2,306", "0.17 s"), "subgraph": ("2,565", "13 ms")},
    "grid100x100": {"pnp": ("45,613", "240 s"), "gtwp": ("16,000", "3 s"), "subgraph": ("18,790", "0.33 s")},
    "b12": {"pnp": ("1,200 / 1,188", "4.85 s"), "gtwp": ("1,598", "9.6 ms"), "subgraph": ("2,205", "48.46 ms")},
    "b17": {"pnp": ("135,000", "3,100 s"), "gtwp": ("109,879", "88 s"), "subgraph": ("155,396", "3.89 s")},
    "b18": {"pnp": ("832,538", "40 h 18 min"), "gtwp": ("395,624", "2,163 s"), "subgraph": ("1,936,952", "40.55 s")},
}

ALGS = ["gtwp", "subgraph", "pnp", "multilevel", "scotch", "gtwp-fit", "subgraph-dist"]


def timed(cmd):
    """Runs cmd under /usr/bin/time; returns (exit code, seconds, stdout, stderr)."""
    fd, tfile = tempfile.mkstemp()
    os.close(fd)
    p = subprocess.run(["/usr/bin/time", "-f", "%e", "-o", tfile] + cmd,
                       capture_output=True, text=True)
    with open(tfile) as f:
        lines = [l for l in f.read().split("\n") if l.strip()]
    os.unlink(tfile)
    secs = float(lines[-1]) if lines else float("nan")
    return p.returncode, secs, p.stdout, p.stderr


def evaluate(graph, arch, mapping, cap):
    p = subprocess.run([TM, "eval", "-g", graph, "-a", arch, "-m", mapping,
                        "--capacity", str(cap), "--format", "json"],
                       capture_output=True, text=True)
    if p.returncode == 2:
        raise RuntimeError(p.stderr)
    e = json.loads(p.stdout)
    return e["comm_cost"], e["capacities_respected"], e["loads"][0]["max"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--algs", default=",".join(ALGS))
    ap.add_argument("--seed", default="0")
    ap.add_argument("--json", default="")
    ap.add_argument("--markdown", default="")
    args = ap.parse_args()
    if not os.environ.get("TASKMAP"):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "taskmap-cli"], cwd=ROOT,
                       check=True)
    gmap = shutil.which("scotch_gmap") or shutil.which("gmap")
    only = set(filter(None, args.only.split(",")))
    # Algorithms with parameters go between ";": "multilevel;multilevel,preset=fast" (a
    # list with a ";" or a "=" is split on ";" only).
    sep = ";" if ";" in args.algs or "=" in args.algs else ","
    algs = [a.strip() for a in args.algs.split(sep) if a.strip()]
    work = tempfile.mkdtemp(prefix="berger-")
    results = []
    for name, path, side, cap, paper_tasks in INSTANCES:
        if only and name not in only:
            continue
        if path is None:
            s = name[len("grid"):].split("x")[0]
            graph = os.path.join(work, name + ".graph")
            subprocess.run([TM, "gen", "grid", f"{s}x{s}", "-o", graph], check=True,
                           capture_output=True)
        else:
            graph = os.path.join(DATA, path)
        info = subprocess.run([TM, "info", graph], capture_output=True, text=True, check=True).stdout
        tasks = int(info.split("tasks")[1].split()[0])
        torus, mesh = f"torus:{side}x{side}", f"mesh:{side}x{side}"
        nodes = side * side
        for alg in algs:
            out = os.path.join(work, f"{name}.{alg}.map")
            if alg == "scotch":
                if not gmap:
                    continue
                grf = os.path.join(work, name + ".grf")
                if not os.path.exists(grf):
                    subprocess.run([TM, "convert", graph, grf], check=True, capture_output=True)
                tgt = os.path.join(work, f"torus{side}.tgt")
                with open(tgt, "w") as f:
                    f.write(f"torus2D {side} {side}\n")
                b = max(cap * nodes / tasks - 1.0, 0.0)
                rc, secs, _, err = timed([gmap, f"-b{b:.6f}", grf, tgt, out])
                note = f"-b{b:.4f}"
            else:
                cmd = [TM, "map", "-g", graph, "-a", torus, "-A", alg, "--capacity", str(cap),
                       "-s", args.seed, "--format", "json", "--quiet", "-o", out]
                rc, secs, stdout, err = timed(cmd)
                note = ""
                try:
                    note = f"map {json.loads(stdout)['map_time_ms']:.1f} ms"
                except (ValueError, KeyError):
                    pass
            row = {"instance": name, "tasks": tasks, "paper_tasks": paper_tasks, "nodes": nodes,
                   "capacity": cap, "algorithm": alg, "seconds": secs, "note": note}
            if rc not in (0, 1):
                row["error"] = err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"
            else:
                fc, ok, mx = evaluate(graph, torus, out, cap)
                fcm, _, _ = evaluate(graph, mesh, out, cap)
                row.update({"fc": fc, "fc_mesh": fcm, "capacity_ok": ok, "max_load": mx,
                            # The paper's objective (models.md §2): 2·f_C for the grids,
                            # f_C with arc-count weights for the netlists.
                            "paper_objective": 2 * fc if path is None else fc})
            results.append(row)
            print(json.dumps(row), file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    if args.json:
        write_atomically(args.json, json.dumps(results, indent=1))
    md = table(results, algs)
    print(md)
    if args.markdown:
        write_atomically(args.markdown, md)


def write_atomically(path, text):
    """Writes through a temporary file in the same folder and a rename."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def fmt_time(s):
    if s != s:
        return "?"
    return f"{s:.2f} s"


def table(results, algs):
    lines = []
    head = ["instance", "tasks", "paper GTWP", "paper Subgraph", "paper P&P"] + algs
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    names = []
    for r in results:
        if r["instance"] not in names:
            names.append(r["instance"])
    for name in names:
        rows = {r["algorithm"]: r for r in results if r["instance"] == name}
        any_row = next(iter(rows.values()))
        pub = PUBLISHED.get(name, {})
        cells = [name, f"{any_row['tasks']:,}"]
        for a in ("gtwp", "subgraph", "pnp"):
            v = pub.get(a)
            cells.append(f"{v[0]} ({v[1]})" if v else "-")
        for a in algs:
            r = rows.get(a)
            if r is None:
                cells.append("-")
            elif "error" in r:
                cells.append("error")
            else:
                flag = "" if r["capacity_ok"] else f" **over cap (max {r['max_load']})**"
                extra = f"; {r['note']}" if r["note"].startswith("map") else ""
                cells.append(f"{r['fc']:,} / {r['fc_mesh']:,} ({fmt_time(r['seconds'])}{extra}){flag}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
