#!/usr/bin/env bash
# Parity of `taskmap eval` with Scotch's `gmtst`.
#
# For each (Walshaw graph, target) pair: Scotch `gmap` maps the graph (converted to Scotch
# format by Scotch's own `gcv`), Scotch `gmtst` scores the mapping, and `taskmap eval` scores
# the same mapping twice: once reading the Scotch target file, once with taskmap's own
# spec of the same target. f_C and the edge cut must be equal in all three.
#
# Needs: `apt-get install scotch` (gives scotch_gmap or gmap, gmtst, gcv) and python3.
# Usage: bench/scotch_parity.sh   (from the repository root; exits 1 on any mismatch)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data}
GMAP=$(command -v scotch_gmap || command -v gmap || true)
if [ -z "$GMAP" ] || ! command -v gmtst >/dev/null || ! command -v gcv >/dev/null; then
  echo "Scotch is not installed: apt-get install scotch" >&2
  exit 2
fi
cargo build --release -q -p taskmap-cli
TM=target/release/taskmap
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# graph | Scotch target | taskmap spec of the same target [| note]
# A note marks a pair where Scotch does not score its own target as documented: then only
# gmtst and the taskmap spec (which names what Scotch actually computes) must agree.
PAIRS=(
  "add20|torus2D 8 8|torus:8x8"
  "data|mesh3D 4 4 4|mesh:4x4x4"
  "3elt|hcub 6|hypercube:6"
  "uk|tleaf 3 8 90 8 9 4 1|tree:4:8:8/1:10:100"
  "whitaker3|cmpltw 8 1 1 2 2 3 3 4 4|wcomplete:1,1,2,2,3,3,4,4"
  "crack|sub 10 0 1 2 3 8 9 10 11 27 36 torus2D 8 8|sub:0-3,8-11,27,36:torus:8x8"
  "4elt|torus3D 4 4 4|torus:4x4x4"
  # Scotch 7.0.3 computes wrap-around distances for meshXD (atst: diameter 3 for
  # "meshXD 2 3 5", 6 for "mesh2D 3 5"); taskmap reads meshXD as a mesh.
  "cs4|meshXD 4 2 4 2 4|torus:2x4x2x4|Scotch meshXD = torus"
)

printf "%-10s %-40s %12s %12s %12s %10s %10s %10s  %s\n" graph target "fC(gmtst)" "fC(tgt)" "fC(spec)" "cut(gmtst)" "cut(tgt)" "cut(spec)" ok
fail=0
for p in "${PAIRS[@]}"; do
  IFS='|' read -r g tgt spec note <<<"$p"
  src="$DATA/walshaw/graphs/$g.graph.gz"
  zcat "$src" > "$OUT/$g.graph"
  gcv -ic -os "$OUT/$g.graph" "$OUT/$g.grf"
  echo "$tgt" > "$OUT/t.tgt"
  "$GMAP" -b0.03 "$OUT/$g.grf" "$OUT/t.tgt" "$OUT/$g.map"
  read -r sfc scut < <(gmtst "$OUT/$g.grf" "$OUT/t.tgt" "$OUT/$g.map" |
    python3 -c 'import sys,re
t=sys.stdin.read()
fc=re.search(r"CommExpan=\S+\s+\((\d+)\)",t).group(1)
cut=re.search(r"CommCutSz=\S+\s+\((\d+)\)",t).group(1)
print(fc,cut)')
  ev() {
    "$TM" eval --graph "$src" --arch "$1" --mapping "$OUT/$g.map" --format json |
      python3 -c 'import sys,json; e=json.load(sys.stdin); print(e["comm_cost"], e["edge_cut"])'
  }
  read -r tfc tcut < <(ev "$OUT/t.tgt")
  read -r pfc pcut < <(ev "$spec")
  ok=yes
  if [ -n "${note:-}" ]; then
    ok="yes ($note)"
    tfc="($tfc)"
    if [ "$sfc" != "$pfc" ] || [ "$scut" != "$pcut" ] || [ "$scut" != "$tcut" ]; then ok=NO; fail=1; fi
  elif [ "$sfc" != "$tfc" ] || [ "$sfc" != "$pfc" ] || [ "$scut" != "$tcut" ] || [ "$scut" != "$pcut" ]; then
    ok=NO; fail=1
  fi
  printf "%-10s %-40s %12s %12s %12s %10s %10s %10s  %s\n" "$g" "$tgt" "$sfc" "$tfc" "$pfc" "$scut" "$tcut" "$pcut" "$ok"
done
exit $fail
