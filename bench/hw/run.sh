#!/usr/bin/env bash
# Run each rule_truth kernel under compute-sanitizer synccheck and racecheck; summary in $OUT.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/hw}; mkdir -p "$out"
nvcc -O2 -arch=sm_90 -lineinfo rule_truth.cu -o /tmp/rule_truth || exit 1
for k in if_else_xor half_full_mask strided_loop_full_mask exit_then_full_mask lane_not_in_mask syncwarp_half_full_mask syncwarp_not_in_mask \
         unrolled_volatile butterfly_syncwarp barrier_in_half_warp barrier_after_return activemask_loop; do
  for tool in synccheck racecheck; do
    extra=""; [ $tool = racecheck ] && extra="--racecheck-report hazard"
    timeout 25 compute-sanitizer --tool $tool $extra /tmp/rule_truth $k >"$out/$k.$tool.txt" 2>&1 || true
    errs=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/$k.$tool.txt" | tail -1)
    first=$(grep -m1 -E "Barrier error|Invalid|Race reported|hazard|Error:" "$out/$k.$tool.txt")
    status=$(grep -m1 -E "^$k: " "$out/$k.$tool.txt")
    echo "$k $tool: [$status] $errs | $first" | tee -a "$out/summary.txt"
  done
done
rm -f "$out"/*.racecheck.txt "$out"/*.synccheck.txt
