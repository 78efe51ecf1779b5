#!/usr/bin/env bash
# Our search beside the ROADEF 2012 winners' own program, on the same instances, seed and time
# limit, one after the other (each with both cores: theirs forks a second search, ours runs
# two), both answers checked by our checker from the files they wrote.
#
#   benches/roadef/vs-s41.sh S41_EXE OURS_EXE [SECONDS] [SEED] [INSTANCES] [DATA_DIR]
#   e.g. benches/roadef/vs-s41.sh /tmp/machineReassignment target/release/examples/roadef 300 1 "a2_2 a2_3 a2_5"
#
# S41_EXE: the gcc build in team S41's repository (github.com/harisgavranovic/
# roadef-challenge2012-S41, `Releasegcc/machineReassignment`; their Intel build refuses
# processors other than Intel's). It is not ours to ship; fetch it yourself. OURS_EXE: the
# `roadef` example (`cargo build --release -p berth-placement --example roadef`). DATA_DIR
# holds A/ and B/ (default: the committed data, set A only). Prints per instance both costs
# and ours / theirs.
set -euo pipefail
s41=$(realpath "$1") ours=$(realpath "$2") seconds=${3:-300} seed=${4:-1}
instances=${5:-"a2_2 a2_3 a2_5"}
root=${6:-$(cd "$(dirname "$0")" && pwd)/data}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
checked() {
  python3 -c 'import json,sys
d = json.load(sys.stdin)
if not d["feasible"]:
    sys.exit("rejected by the checker: %s" % d["violations"])
print(d["checked_cost"])'
}
printf '%-6s %16s %16s %8s\n' instance S41 ours ratio
for inst in $instances; do
  data=$root/$(echo "${inst:0:1}" | tr ab AB)
  model=$data/model_$inst.txt assignment=$data/assignment_$inst.txt
  # Theirs writes scratch files in its working directory.
  (cd "$out" && "$s41" -t "$seconds" -p "$model" -i "$assignment" -o "$out/$inst.s41" -s "$seed" > "$out/$inst.s41.log" 2>&1)
  # With no budget our search returns its start: the example writes it and checks it.
  theirs=$("$ours" "$model" "$assignment" "$out/$inst.s41.checked" --start "$out/$inst.s41" \
    --iterations 0 --threads 1 | checked)
  mine=$("$ours" "$model" "$assignment" "$out/$inst.ours" --seconds "$seconds" --seed "$seed" \
    --threads 2 | checked)
  printf '%-6s %16s %16s %8s\n' "$inst" "$theirs" "$mine" \
    "$(python3 -c 'import sys; print("%.4g" % (int(sys.argv[2]) / int(sys.argv[1])))' "$theirs" "$mine")"
done
