#!/usr/bin/env bash
# Before/after on the ROADEF instances: two builds of the `roadef` example run alternately on
# the same instances, seeds and time limit, one line per run (cost as the checker recomputed it).
#
#   benches/roadef/ab.sh BEFORE_EXE AFTER_EXE [SECONDS] [SEEDS] [INSTANCES]
#   e.g. benches/roadef/ab.sh /tmp/roadef-old target/release/examples/roadef 20 "1 2" "a1_4 a2_5"
#
# Build BEFORE_EXE from the older commit in a worktree with its own target directory
# (`cargo build --release -p berth-placement --example roadef`) and copy it aside.
set -euo pipefail
before=$1 after=$2 seconds=${3:-20} seeds=${4:-1} instances=${5:-"a1_1 a1_2 a1_3 a1_4 a1_5 a2_1 a2_2 a2_3 a2_4 a2_5"}
data=$(cd "$(dirname "$0")" && pwd)/data/A
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for inst in $instances; do
  for seed in $seeds; do
    for side in before after; do
      exe=$before; [ "$side" = after ] && exe=$after
      "$exe" "$data/model_$inst.txt" "$data/assignment_$inst.txt" "$out/$side.sol" \
        --seconds "$seconds" --seed "$seed" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(sys.argv[1], d["checked_cost"], "feasible" if d["feasible"] else "INFEASIBLE", d["tried"])' \
          "$inst seed $seed $side"
    done
  done
done
