#!/usr/bin/env bash
# Before/after on the ROADEF instances: two builds of the `roadef` example on the same
# instances, seeds and time limit, one line per run (cost as the checker recomputed it).
#
#   benches/roadef/ab.sh BEFORE_EXE AFTER_EXE [SECONDS] [SEEDS] [INSTANCES] [DATA_DIR]
#   e.g. benches/roadef/ab.sh /tmp/roadef-old target/release/examples/roadef 20 "1 2" "a1_4 a2_5"
#
# The two run alternately; with AB_TOGETHER=1 they run at the same time, one per core, so
# both see the same machine load. Each runs THREADS searches at once (default 1: one per
# core when they run together; builds before the portfolio ignore the flag). DATA_DIR holds
# A/ and B/ (default: the committed data, set A only; set B as `data/README.md` says).
# Build BEFORE_EXE from the older commit in a worktree with its own target directory
# (`cargo build --release -p berth-placement --example roadef`) and copy it aside.
set -euo pipefail
before=$1 after=$2 seconds=${3:-20} seeds=${4:-1} instances=${5:-"a1_1 a1_2 a1_3 a1_4 a1_5 a2_1 a2_2 a2_3 a2_4 a2_5"}
root=${6:-$(cd "$(dirname "$0")" && pwd)/data}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {
  local side=$1 exe=$2 inst=$3 seed=$4 data
  data=$root/$(echo "${inst:0:1}" | tr ab AB)
  "$exe" "$data/model_$inst.txt" "$data/assignment_$inst.txt" "$out/$side.sol" \
    --seconds "$seconds" --seed "$seed" --threads "${THREADS:-1}" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(sys.argv[1], d["checked_cost"], "feasible" if d["feasible"] else "INFEASIBLE", d["tried"])' \
      "$inst seed $seed $side"
}
for inst in $instances; do
  for seed in $seeds; do
    if [ "${AB_TOGETHER:-0}" = 1 ]; then
      run before "$before" "$inst" "$seed" > "$out/before.txt" &
      pid=$!
      run after "$after" "$inst" "$seed" > "$out/after.txt"
      # A bare `wait` returns 0 whatever the run did; this one fails the script with it.
      wait "$pid"
      cat "$out/before.txt" "$out/after.txt"
    else
      run before "$before" "$inst" "$seed"
      run after "$after" "$inst" "$seed"
    fi
  done
done
