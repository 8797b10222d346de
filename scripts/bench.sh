#!/bin/sh
# Times the scale figures of docs/performance.md: CPU seconds (user + system)
# and peak memory of each command, one point or study at a time on one core
# (-j1). Usage: scripts/bench.sh [BUILD_DIR]   (default: build)
set -eu
bin=${1:-build}/bin
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # LABEL COMMAND...
  label=$1
  shift
  /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$@" > "$tmp/out" 2>&1 || { echo "$label: failed"; cat "$tmp/out"; exit 1; }
  awk -v l="$label" '{ printf "%-58s %8.2f CPU s %8.0f MiB\n", l, $1 + $2, $3 / 1024 }' "$tmp/time"
}

run "case study sweep, 14 points, default mode" "$bin/rapidc" "$src/examples/case_study_llama70b.rapid" -j1
run "case study sweep, 14 points, hierarchical" "$bin/rapidc" "$src/examples/case_study_llama70b.rapid" -j1 --mode=hierarchical
run "300-sample fault Monte Carlo, one layout" "$bin/rapidc" "$src/examples/bench/llama70b_fault_mc.rapid" -j1
run "Korthikanti Table 5, 8 points" "$bin/rapidc" "$src/examples/validation/korthikanti_table5.rapid" -j1
# Llama-3-405B (8K shape) as Meta ran it, at 512 to 16,384 GPUs: DP 4 to 128
# over the RoCE fat tree, global batch 16 sequences per replica, on H200s (at
# DP 4 ZeRO-2 shards too little for 80 GB).
for dp in 4 8 16 32 64 128; do
  sed -e "s/dp = 128/dp = $dp/" -e "s/FatTree(2048)/FatTree($((dp * 16)))/" \
      -e "s/global_batch = 2048/global_batch = $((dp * 16))/" -e 's/h100_sxm_80gb/h200/' \
      "$src/examples/llama3_405b.rapid" > "$tmp/l$dp.rapid"
  run "Llama-3-405B 8K on H200s, $((dp * 128)) GPUs" "$bin/rapidc" "$tmp/l$dp.rapid" -j1
done
run "rapid-sim 1 MiB ring all-reduce, 1,024 ranks" "$bin/rapid-bench" 1024
run "rapid-trace replay, Megatron TP8 (8 Kineto traces, 31 MB)" "$bin/rapid-trace" replay "$src/test/data/traces/kineto/megatron_tp8_a100"
run "rapid-trace replay, DLRM 8 x V100" "$bin/rapid-trace" replay "$src/test/data/traces/kineto/dlrm8_v100"
echo '{"dimensions": [{"kind": "Switch", "size": 4, "bandwidth": "300 GB/s", "latency": "700 ns"}]}' > "$tmp/four.json"
run "rapid-trace replay, Megatron TP8 re-sharded to TP 4" "$bin/rapid-trace" replay \
    "$src/test/data/traces/kineto/megatron_tp8_a100" --tensor-parallel 4 --profiled-gpu a100_sxm_80gb --network "$tmp/four.json"
# The same Megatron set profiled without record_shapes: its shapes come from
# the 8 host execution traces beside it (read only because they are needed).
python3 "$src/test/Profile/Inputs/strip_shapes.py" "$src/test/data/traces/kineto/megatron_tp8_a100" "$tmp/bare" --hosts
run "rapid-trace replay, Megatron TP8, shapes from host traces" "$bin/rapid-trace" replay "$tmp/bare"
