#!/bin/sh
# Accuracy of De Petris & Perego's evaluation function F against the wormhole simulator:
# 40 random programs (4-200 tasks, ~7 partners per task, 8 compute cycles per flit sent),
# each mapped at random onto the smallest square mesh that holds it. Prints one row per
# program (simulated completion time, F, signed error) and the largest and mean |error|
# (the paper: 5.8 % and 1.7 % against its own simulator). With --sweep, also the
# sensitivity to the phase overlap fraction and to the message length.
set -eu
cd "$(dirname "$0")/.."
tests=accuracy_table
if [ "${1:-}" = "--sweep" ]; then tests=accuracy_; fi
exec cargo test -q -p taskmap --release --test sim_perego_accuracy -- --ignored --nocapture --test-threads 1 "$tests"
