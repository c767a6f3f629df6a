#!/usr/bin/env bash
# Signals at random moments during a large write (issue 43): N SIGKILLs, then N SIGTERMs,
# of `taskmap gen grid SIZE -o OUT` over an older OUT. After each SIGTERM the exit code must
# match the output: 130 with the old file untouched, or 0 with the new file whole. After the
# SIGKILLs, one more write must leave no temporary file behind.
#
#     bash bench/kill_writes.sh [N=50] [SIZE=1000x1000]    (TASKMAP=path, default target/release/taskmap)
set -u
N=${1:-50}
SIZE=${2:-1000x1000}
T=${TASKMAP:-target/release/taskmap}
dir=$(mktemp -d)
out="$dir/out.graph"
"$T" gen grid 10x10 -o "$dir/old.graph" >/dev/null
"$T" gen grid "$SIZE" -o "$dir/new.graph" >/dev/null
old_head=$(head -c 200 "$dir/old.graph" | md5sum)
new_sum=$(md5sum < "$dir/new.graph")
start=$(date +%s%N)
"$T" gen grid "$SIZE" -o "$out" >/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "one write of grid $SIZE: $ms ms ($(stat -c %s "$dir/new.graph") bytes)"
delay() { awk -v m="$ms" -v r="$RANDOM" 'BEGIN { printf "%.3f", (r / 32767) * m * 1.2 / 1000 }'; }
for i in $(seq "$N"); do
  cp "$dir/old.graph" "$out"
  "$T" gen grid "$SIZE" -o "$out" >/dev/null 2>&1 &
  pid=$!
  sleep "$(delay)"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
done
left_before=$(find "$dir" -name '.*.tmp' | wc -l)
"$T" gen grid 10x10 -o "$out" >/dev/null
left_after=$(find "$dir" -name '.*.tmp' | wc -l)
echo "SIGKILL x $N: $left_before temporary files left; after the next write: $left_after"
ok=0; bad=0; c130=0; c0=0
for i in $(seq "$N"); do
  cp "$dir/old.graph" "$out"
  "$T" gen grid "$SIZE" -o "$out" >/dev/null 2>&1 &
  pid=$!
  sleep "$(delay)"
  kill -TERM "$pid" 2>/dev/null
  wait "$pid"; rc=$?
  if [ "$rc" = 130 ] && [ "$(head -c 200 "$out" | md5sum)" = "$old_head" ]; then ok=$((ok+1)); c130=$((c130+1))
  elif [ "$rc" = 0 ] && [ "$(md5sum < "$out")" = "$new_sum" ]; then ok=$((ok+1)); c0=$((c0+1))
  else bad=$((bad+1)); echo "mismatch: exit $rc"; fi
done
echo "SIGTERM x $N: $ok consistent ($c130 stopped with the old file, $c0 finished with the new), $bad not"
echo "temporary files left: $(find "$dir" -name '.*.tmp' | wc -l)"
rm -rf "$dir"
