#!/usr/bin/env bash
# Runs on the H200 through the device tool, from the repository root, over a bundle made by
#   tools/bench/gpu_bundle.sh build/tests/gpu_tests build/tests/e2e_tests build/tools/sieve \
#       build/tools/gpu_paths_bench build/tools/threshold_select_bench
# (carry .devpack). Logs go to $OUT (at most eight files come back).
# Usage: tools/bench/device_run.sh tests|bench|sanitize [extra gpu_paths_bench flags]
#   tests:    every gpu_tests test, and beside it the CLI contract tests with --device gpu.
#   bench:    the path benchmark with per-stage device times (--stages; flags after the mode go
#             to it, e.g. --threshold 0 --candidates 0), the threshold-select kernel benchmark,
#             and the PyTorch baseline (tools/bench/peers/torch_paths.py).
#   sanitize: compute-sanitizer memcheck over a few executor tests and racecheck + synccheck
#             over the threshold select's smallest case.
# For a branch against the previous main in one call, see tools/bench/device_verify.sh.
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
mode=${1:-tests}
shift || true
case "$mode" in
  tests)
    SIEVE_SOURCE_DIR=$PWD SIEVE_CLI=$B/sieve SIEVE_TEST_DEVICE=gpu timeout 220 "$B/e2e_tests" > "$OUT/e2e_gpu.log" 2>&1 &
    e2e=$!
    timeout 300 "$B/gpu_tests" > "$OUT/gpu_tests.log" 2>&1
    echo "gpu_tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/gpu_tests.log" | head -20
    wait $e2e; echo "e2e_tests (gpu) exit: $?"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/e2e_gpu.log" | head -20
    gzip -f "$OUT/gpu_tests.log" "$OUT/e2e_gpu.log"
    ;;
  bench)
    timeout 200 "$B/gpu_paths_bench" --reps 10 --stages "$@" > "$OUT/gpu_paths_bench.jsonl" 2> "$OUT/gpu_paths_bench.txt"
    echo "gpu_paths_bench exit: $?"; grep -v "^stages" "$OUT/gpu_paths_bench.txt"
    timeout 120 "$B/threshold_select_bench" --reps 5 > "$OUT/ts_bench.jsonl" 2> "$OUT/ts_bench.txt"
    echo "threshold_select_bench exit: $?"; tail -20 "$OUT/ts_bench.txt"
    timeout 200 python3 tools/bench/peers/torch_paths.py > "$OUT/torch_paths.txt" 2>&1
    echo "torch_paths exit: $?"; tail -12 "$OUT/torch_paths.txt"
    ;;
  sanitize)
    timeout 240 compute-sanitizer --tool memcheck --error-exitcode 3 "$B/gpu_tests" \
      --gtest_filter='GpuExecutorTest.EdgeFilters:GpuExecutorTest.RejectsBadRequests:GpuExecutorTest.AppendUploadsOnlyNewRows' \
      > "$OUT/sanitize_memcheck.log" 2>&1
    echo "memcheck exit: $?"; tail -5 "$OUT/sanitize_memcheck.log"
    for tool in racecheck synccheck; do
      timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 "$B/gpu_tests" \
        --gtest_filter='ThresholdSelectTest.SanitizerSmall' > "$OUT/sanitize_$tool.log" 2>&1
      echo "$tool exit: $?"; tail -5 "$OUT/sanitize_$tool.log"
    done
    ;;
  *) echo "usage: $0 tests|bench|sanitize" >&2; exit 2 ;;
esac
