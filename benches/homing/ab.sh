#!/usr/bin/env bash
# Before/after on the homing instances: two builds of the `homing` example solve the same
# instances in turn (never at once: each may use both cores), RUNS times each, and the
# median seconds per side are printed under the runs.
#
#   benches/homing/ab.sh BEFORE_EXE AFTER_EXE [INSTANCES] [RUNS] [THREADS] [DIR]
#   e.g. benches/homing/ab.sh /tmp/homing-old target/release/examples/homing "h60x800-s5 h60x800-s6" 5 2
#
# BEFORE_ARGS and AFTER_ARGS add options to one side (e.g. one build against itself:
#   BEFORE_ARGS=--forget benches/homing/ab.sh EXE EXE "h60x800-s5" 5 2
# measures the memory of refuted subtrees).
#
# DIR holds the instance files `cargo xtask bench-homing` writes (default:
# target/bench-homing/instances). Build BEFORE_EXE from the older commit in a worktree with
# its own target directory (`cargo build --release -p berth-benches --example homing`).
set -euo pipefail
before=$1 after=$2 instances=${3:-"h60x800-s5 h60x800-s6"} runs=${4:-5} threads=${5:-2}
dir=${6:-${CARGO_TARGET_DIR:-target}/bench-homing/instances}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for run in $(seq "$runs"); do
  for inst in $instances; do
    for side in before after; do
      exe=$before args=${BEFORE_ARGS:-}
      [ "$side" = after ] && exe=$after args=${AFTER_ARGS:-}
      # shellcheck disable=SC2086 # the options split into words
      "$exe" solve "$dir/$inst.json" --limit 20 --threads "$threads" $args |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(sys.argv[1], d["status"], d["objective"], d["seconds"], d["nodes"])' \
          "$inst $side run $run" | tee -a "$out"
    done
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
secs = collections.defaultdict(list)
nodes = collections.defaultdict(list)
for line in open(sys.argv[1]):
    inst, side, _, _, status, objective, seconds, n = line.split()
    secs[(inst, side)].append(float(seconds))
    nodes[(inst, side)].append(int(n))
for inst in dict.fromkeys(k[0] for k in secs):
    b, a = (statistics.median(secs[(inst, s)]) for s in ("before", "after"))
    nb, na = (statistics.median(nodes[(inst, s)]) for s in ("before", "after"))
    print(f"{inst}: median {b:.3f} s before, {a:.3f} s after ({a / b:.2f}x);"
          f" nodes {nb:.0f} before, {na:.0f} after")
PY
