#!/usr/bin/env bash
# Runs each command on an absurd but valid size and prints its exit code, wall time and
# the first line of its error: the limits table of docs/formats.md.
#   bash bench/absurd_sizes.sh [path/to/taskmap]   (default target/release/taskmap)
set -u
T=${1:-target/release/taskmap}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$T" gen grid 30x30 -o "$dir/g.graph" >/dev/null
printf '0\n' > "$dir/one.map"
run() {
    local start end rc err
    start=$(date +%s.%N)
    timeout 120 "$T" "$@" >/dev/null 2>"$dir/err"
    rc=$?
    end=$(date +%s.%N)
    err=$(head -c 150 "$dir/err" | head -1 | sed "s|$dir/||g")
    printf '| `%s` | %s | %.2f | %s |\n' "$*" "$rc" "$(echo "$end - $start" | python3 -c 'import sys; print(eval(sys.stdin.read()))')" "$err" | sed "s|$dir/||g"
}
echo '| command | exit | seconds | message |'
echo '|---|---|---|---|'
run arch complete:4294967295
run arch hypercube:31
run arch hypercube:27 --links
TASKMAP_MEMORY_LIMIT=1G run arch hypercube:24 --links
run arch mesh:65536x65535
run arch torus:4096x4096x256
run arch tree:65536:65535/1:2
run arch sub:0-4294967294:complete:4294967295
for alg in block round-robin random drb multilevel exact gtwp gtwp-fit subgraph subgraph-dist pnp; do
    run map -g "$dir/g.graph" -a complete:16777216 -A "$alg" -o "$dir/out.map"
done
run map -g "$dir/g.graph" -a complete:16777217
run map -g "$dir/g.graph" -a torus:4096x4096
run compare -g "$dir/g.graph" -a complete:16777216
run gen random 4294967295 -o "$dir/x.graph"
run gen grid 65536x65536 -o "$dir/x.graph"
