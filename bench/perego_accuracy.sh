#!/bin/sh
# Accuracy of De Petris & Perego's evaluation function F against the wormhole simulator:
# 40 random programs (4-200 tasks, ~7 partners per task, 8 compute cycles per flit sent),
# each mapped at random onto the smallest square mesh that holds it. Prints one row per
# program (simulated completion time, F, signed error) and the largest and mean |error|
# (the paper: 5.8 % and 1.7 % against its own simulator), on the studied set and on a
# held-out one, for F (SpmModel::evaluate, with slack absorption) and for eq. 2-10 alone,
# with the terms of R at the argmax PE of each. With --sweep, also the sensitivity to the
# phase overlap fraction and to the message length (sweep), the alternatives studied
# (variants), the messages of one program's critical task (critical-task, PROG=0..39,
# default 22) and the experiment on ten sets of 40 (many-sets, SETS=N for another count):
# the tables of the example crates/taskmap/examples/perego_accuracy.rs.
set -eu
cd "$(dirname "$0")/.."
tables=table
if [ "${1:-}" = "--sweep" ]; then tables="table sweep variants critical-task many-sets"; fi
# shellcheck disable=SC2086 # one argument per table
exec cargo run -q --release -p taskmap --example perego_accuracy -- $tables
