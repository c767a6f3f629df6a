#!/usr/bin/env bash
# What the Python binding costs: one mapping of a million-task random geometric graph onto
# complete:64, by the CLI from a METIS file and by Python from numpy CSR arrays (np.load,
# Graph.from_csr, taskmap.map), in one run; wall time and peak memory of each (GNU time),
# and whether the two mappings are the same.
#
# Needs: GNU time (/usr/bin/time), and the package installed in the Python given as $PY
# (default python3): python3 -m venv v && v/bin/pip install . && PY=v/bin/python bench/python_binding.sh
# Usage: bench/python_binding.sh [TASKS] [TARGET]   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000000}
TARGET=${2:-complete:64}
PY=${PY:-python3}
cargo build --release -q -p taskmap-cli
TM=$PWD/target/release/taskmap
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cd "$OUT"
"$TM" gen rgg "$N" -o g.graph -q
"$PY" - <<'PYEOF'
import numpy as np, taskmap
x, a, _, _ = taskmap.read_graph("g.graph").csr()
np.save("xadj.npy", x)
np.save("adjncy.npy", a.astype(np.int32))
PYEOF
/usr/bin/time -f "CLI     wall %e s  peak %M KB" "$TM" map -q -g g.graph -a "$TARGET" -o cli.txt >/dev/null
/usr/bin/time -f "Python  wall %e s  peak %M KB" "$PY" - "$TARGET" <<'PYEOF'
import sys, time
import numpy as np, taskmap
t0 = time.perf_counter()
g = taskmap.Graph.from_csr(np.load("xadj.npy"), np.load("adjncy.npy"))
t1 = time.perf_counter()
pes = taskmap.map(g, sys.argv[1], seed=0)
t2 = time.perf_counter()
np.savetxt("py.txt", pes, fmt="%d")
print(f"Python  from_csr {t1 - t0:.2f} s, map {t2 - t1:.2f} s")
PYEOF
cmp -s cli.txt py.txt && echo "same mapping" || { echo "the mappings differ"; exit 1; }
