#!/usr/bin/env bash
# Runs on the H200 through the device tool, from the repository root, over a bundle made by
#   ../shared/tools/gpu-bundle .bundle build/tests/gpu_tests build/gpu/threshold_select_bench \
#       build/gpu/gpu_paths_bench && strip .bundle/bin/* &&
#   mkdir -p .devpack && tar -cJf .devpack/bundle.tar.xz .bundle   (carry .devpack)
# Usage: tools/bench/device_ts.sh probe|bench|tests   (logs go to $OUT)
#   probe: the threshold-select tests, an ncu profile of one threshold-select launch at 1M keys,
#          the threshold-select bench at 10M keys (no repair cases), the dense path at 10M rows
#          with the threshold select on and off (per-stage device times).
set -uo pipefail
[ -d .bundle ] || tar -xJf .devpack/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B=$PWD/.bundle/bin
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/device.txt"
case "${1:-probe}" in
  probe)
    timeout 120 "$B/gpu_tests" --gtest_filter='ThresholdSelect*:PagePool*:GpuExecutorTest.ThresholdSelectDensePath' > "$OUT/ts_tests.log" 2>&1
    echo "ts tests exit: $?"; grep -E "^\[  (PASSED|FAILED) " "$OUT/ts_tests.log" | head -40
    grep -B2 -A6 "Failure" "$OUT/ts_tests.log" | head -80
    timeout 150 ncu --clock-control none --kernel-name regex:SelectKernel --launch-skip 7 --launch-count 1 \
      --section SpeedOfLight --section Occupancy \
      --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,smsp__inst_executed.sum,smsp__cycles_active.avg \
      "$B/threshold_select_bench" --rows 1000000 --reps 2 --warmup 1 --repair-reps 0 > "$OUT/ncu.txt" 2>&1
    echo "ncu exit: $?"; grep -E "Duration|Grid Size|Registers|Achieved Occupancy|stalled|inst_executed|cycles_active|Throughput" "$OUT/ncu.txt" | awk '$NF+0 > 0.05 || /Duration|Grid|inst|cycles/' | head -40
    timeout 150 "$B/threshold_select_bench" --reps 5 --repair-reps 0 > "$OUT/ts_bench.jsonl" 2> "$OUT/ts_bench.txt"
    echo "ts bench exit: $?"; cat "$OUT/ts_bench.txt"
    for t in 1 0; do
      SIEVE_GPU_THRESHOLD=$t SIEVE_GPU_STAGES=1 timeout 120 "$B/gpu_paths_bench" --reps 5 --paths dense --fractions 1.0 --extra-rows '' > "$OUT/dense_t$t.jsonl" 2> "$OUT/dense_t$t.txt"
      echo "dense (threshold=$t) exit: $?"; cat "$OUT/dense_t$t.txt"
    done
    ;;
esac
