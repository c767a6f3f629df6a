#!/usr/bin/env python3
"""Runs the fuzz targets (cargo-fuzz, libFuzzer) for a given time each and prints a table
of executions, executions per second, coverage and findings.

    python3 fuzz/run.py --seconds 10              # every target, 10 s each (CI's smoke)
    python3 fuzz/run.py --seconds 600 --jobs 2 metis hwloc
    python3 fuzz/run.py --runs 10000000 metis     # until 10 M executions

Seeds come from `fixtures/` and, when it is there, `../shared/data` (files up to 64 KiB),
copied into `fuzz/corpus/TARGET`, which keeps what the fuzzer finds between runs. A
finding is written to `fuzz/artifacts/TARGET/`; the script then exits with status 1.
Needs `cargo install cargo-fuzz`; builds on the stable toolchain without a sanitizer
(`-s none`: the libraries have no unsafe code).
"""

import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ = os.path.join(ROOT, "fuzz")
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data")

# target: (prefix bytes put before each seed, seed patterns under fixtures/ and shared/data)
TARGETS = {
    "metis": (b"", ["*.graph", "bad/metis_*", "bad/mtkahypar_*", "arch/*.graph", "dimacs10/*.graph",
                    "mtkahypar_instances/*.graph", "walshaw/graphs/*"]),
    "scotch_graph": (b"", ["*.grf", "bad/scotch_*"]),
    "matrix_market": (b"", ["*.mtx", "bad/mtx_*"]),
    "edge_list": (b"", ["*.edges", "bad/edges_*"]),
    "bench": (b"", ["*.bench", "bad/bench_*", "itc99/*.bench"]),
    "mpip": (b"", ["*graphStats*", "bad/mpip_*", "mpi_comm_graphs/graphs/*64ranks*"]),
    "dense": (b"", ["arch/*.mat", "bad/dense_*"]),
    "volumes": (b"", ["bad/volumes_*", "*.edges"]),
    "task_weights": (b"\x08", ["arch/small.mat", "bad/weights_*"]),
    "hwloc": (b"", ["hwloc/*.xml"]),
    "arch_spec": (b"", []),
    "scotch_target": (b"", ["arch/*.tgt", "arch/bad/*.tgt"]),
    "arch_graph": (b"", ["arch/*.graph", "arch/bad/*.graph"]),
    "arch_matrix": (b"", ["arch/*.mat", "arch/bad/*.mat"]),
    "node_list": (b"", []),
    "mapping": (b"\x40\x10", ["*.map", "bad/mapping_*"]),
    "fixed": (b"\x40\x10", ["*.map", "bad/fixed_*"]),
    "capacities": (b"\x00\x10", ["bad/capacities_*"]),
    "program": (b"", ["programs/*.prog", "bad/program_*"]),
    "ttig": (b"", ["hetero/*.ttig", "bad/ttigha_*"]),
    "platform": (b"", ["hetero/*.platform", "bad/platform_*"]),
    "amg": (b"", ["amap/*.amg", "bad/amg_*"]),
    "stg": (b"", ["hetero/*.stg", "bad/stg_*", "stg/rnc50/*"]),
    "dax": (b"", ["hetero/*.xml", "bad/dax_*", "workflows/*.xml"]),
    "wfcommons": (b"", ["hetero/*.json", "bad/wfc*", "workflows/*.json"]),
    "order": (b"", ["bad/order_*"]),
    "algorithm_spec": (b"", []),
    "roundtrip": (b"\x00", ["*.graph", "arch/*.graph"]),
    "evaluate": (b"", []),
    "mappers": (b"", []),
}

# Inline seeds for the targets whose inputs are not files.
INLINE = {
    "arch_spec": [b"torus:8x8", b"mesh:4x4x2", b"tree:4:8:2/1:10:100", b"hypercube:4",
                  b"sub:0-3,8-11:torus:8x8", b"wcomplete:1,2,3", b"tleaf 2 4 10 8 1",
                  b"nodes:4,package:2,core:8/100,10,1", b"cmplt 16", b"torusXD 3 2 2 2"],
    "node_list": [b"node[01-04,07]", b"a[1-2]b[3-4]", b"n1,n2", b"x[01-99]"],
    "capacities": [b"\x00\x10" + b"4\n" * 16, b"\x01\x04" + b"3 2\n" * 4],
    "order": [b"0: 0 1 2\n", b"P0 A B\n"],
    "algorithm_spec": [b"multilevel", b"multilevel,refine=fm", b"exact,nodes=100", b"drb",
                       b"gtwp,saturated=drop", b"pnp,iterations=3"],
    "roundtrip": [b"\x04" + b"3\n0 1\n1 0\n2 1\n", b"\x05PROCESS a\nSTOP\n"],
    "evaluate": [bytes(range(200)), bytes(range(7, 255, 3))],
    "mappers": [bytes(range(200)), bytes((i * 37) % 256 for i in range(300))],
}

MAX_SEED = 64 * 1024

# Inputs longer than this are not tried (default 8192 bytes): specs and node lists are
# short strings.
MAX_LEN = {"node_list": 64, "arch_spec": 256, "algorithm_spec": 256}


def seed_files(patterns):
    for base in (os.path.join(ROOT, "fixtures"), SHARED):
        if not os.path.isdir(base):
            continue
        for pat in patterns:
            for path in sorted(glob.glob(os.path.join(base, pat))):
                if os.path.isfile(path) and os.path.getsize(path) <= MAX_SEED:
                    yield path


def prepare_corpus(target):
    corpus = os.path.join(FUZZ, "corpus", target)
    os.makedirs(corpus, exist_ok=True)
    prefix, patterns = TARGETS[target]
    # Seeds from files get the target's prefix; inline seeds are whole inputs.
    seeds = [prefix + open(p, "rb").read() for p in seed_files(patterns)] + INLINE.get(target, [])
    for i, data in enumerate(seeds):
        path = os.path.join(corpus, f"seed-{i:04d}")
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(data)
    return corpus


def run_target(target, args):
    corpus = prepare_corpus(target)
    artifacts = os.path.join(FUZZ, "artifacts", target) + os.sep
    os.makedirs(artifacts, exist_ok=True)
    limit = [f"-max_total_time={args.seconds}"] if args.seconds else []
    if args.runs:
        limit.append(f"-runs={args.runs}")
    cmd = ["cargo", "fuzz", "run", "-s", "none", "-O", target, corpus, "--",
           *limit, *([f"-seed={args.seed}"] if args.seed else []), "-print_final_stats=1", f"-timeout={args.timeout}", "-rss_limit_mb=2048",
           f"-max_len={MAX_LEN.get(target, 8192)}", f"-artifact_prefix={artifacts}"]
    start = time.time()
    p = subprocess.run(cmd, cwd=FUZZ, capture_output=True, text=True, errors="replace")
    wall = time.time() - start
    log = p.stdout + p.stderr
    with open(os.path.join(FUZZ, "artifacts", f"{target}.log"), "w") as f:
        f.write(log)
    stat = lambda name: int(m.group(1)) if (m := re.search(rf"stat::{name}:\s+(\d+)", log)) else 0
    covs = re.findall(r"cov: (\d+) ft: (\d+)", log)
    cov, ft = covs[-1] if covs else ("?", "?")
    found = [line for line in log.splitlines() if line.startswith("artifact_prefix=") or "Test unit written to" in line]
    return {
        "target": target,
        "runs": stat("number_of_executed_units"),
        "per_s": stat("average_exec_per_sec"),
        "cov": cov,
        "ft": ft,
        "corpus": len(os.listdir(corpus)),
        "wall": wall,
        "ok": p.returncode == 0,
        "found": found,
        "tail": "\n".join(log.splitlines()[-25:]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("targets", nargs="*", help="targets to run (default: all)")
    ap.add_argument("--seconds", type=int, default=None,
                    help="time per target (0: no limit; default 10, or no limit with --runs)")
    ap.add_argument("--runs", type=int, default=0, help="executions per target (0: no limit)")
    ap.add_argument("--jobs", type=int, default=1, help="targets run at once")
    ap.add_argument("--timeout", type=int, default=10, help="seconds one input may take")
    ap.add_argument("--seed", type=int, default=0, help="libFuzzer's seed (0: a random one)")
    args = ap.parse_args()
    if args.seconds is None:
        args.seconds = 0 if args.runs else 10
    targets = args.targets or list(TARGETS)
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        sys.exit(f"unknown targets: {' '.join(unknown)} (known: {' '.join(TARGETS)})")
    if shutil.which("cargo-fuzz") is None:
        sys.exit("cargo-fuzz is not installed: cargo install cargo-fuzz --locked")
    build = subprocess.run(["cargo", "fuzz", "build", "-s", "none", "-O"], cwd=FUZZ)
    if build.returncode != 0:
        sys.exit("the fuzz targets do not build")
    print(f"{'target':<16} {'runs':>11} {'exec/s':>8} {'cov':>6} {'ft':>6} {'corpus':>6} {'wall s':>7}  result",
          flush=True)
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for r in pool.map(lambda t: run_target(t, args), targets):
            result = "ok" if r["ok"] else "FINDING"
            print(f"{r['target']:<16} {r['runs']:>11} {r['per_s']:>8} {r['cov']:>6} {r['ft']:>6} "
                  f"{r['corpus']:>6} {r['wall']:>7.1f}  {result}", flush=True)
            if not r["ok"]:
                failed.append(r)
    for r in failed:
        print(f"\n== {r['target']}: see fuzz/artifacts/{r['target']}.log\n{r['tail']}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
