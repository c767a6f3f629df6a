#!/bin/sh
# Accuracy of De Petris & Perego's evaluation function F against the wormhole simulator:
# 40 random programs (4-200 tasks, ~7 partners per task, 8 compute cycles per flit sent),
# each mapped at random onto the smallest square mesh that holds it. Prints one row per
# program (simulated completion time, F, signed error) and the largest and mean |error|
# (the paper: 5.8 % and 1.7 % against its own simulator), on the studied set and on a
# held-out one, for F (SpmModel::evaluate, with slack absorption) and for eq. 2-10 alone,
# with the terms of R at the argmax PE of each. With --sweep, also the sensitivity to the
# phase overlap fraction and to the message length, the alternatives studied
# (accuracy_variants) and the messages of one program's critical task
# (accuracy_critical_task, PROG=0..39, default 22).
set -eu
cd "$(dirname "$0")/.."
tests=sim_perego_accuracy::accuracy_table
if [ "${1:-}" = "--sweep" ]; then tests=sim_perego_accuracy::accuracy_; fi
exec cargo test -q -p taskmap --release --test taskmap -- --ignored --nocapture --test-threads 1 "$tests"
