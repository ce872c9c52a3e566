#!/usr/bin/env bash
# Runs on the H200 through the device tool, from the repository root, over a bundle made by
#   ../shared/tools/gpu-bundle .bundle build/tests/gpu_tests build/tests/e2e_tests \
#       build/tools/sieve build/gpu/gpu_paths_bench && strip .bundle/bin/* &&
#   mkdir -p .devpack && tar -cJf .devpack/bundle.tar.xz .bundle   (carry .devpack)
# Usage: tools/bench/device_run.sh tests|bench|sanitize   (logs go to $OUT)
set -uo pipefail
# The bundle travels compressed (the device tool carries 64 MiB at most).
[ -d .bundle ] || tar -xJf .devpack/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B=$PWD/.bundle/bin
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/device.txt"
case "${1:-tests}" in
  tests)
    timeout 420 "$B/gpu_tests" 2>&1 | tee "$OUT/gpu_tests.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure|error" | head -60
    echo "gpu_tests exit: ${PIPESTATUS[0]}"
    SIEVE_CLI=$B/sieve SIEVE_TEST_DEVICE=gpu timeout 150 "$B/e2e_tests" 2>&1 | tee "$OUT/e2e_gpu.log" | grep -E "^\[  (PASSED|FAILED) |FAILED|Failure" | head -40
    echo "e2e_tests (gpu) exit: ${PIPESTATUS[0]}"
    ;;
  bench)
    timeout 300 "$B/gpu_paths_bench" > "$OUT/gpu_paths_bench.jsonl" 2> "$OUT/gpu_paths_bench.txt"
    echo "gpu_paths_bench exit: $?"; cat "$OUT/gpu_paths_bench.txt"
    timeout 240 python3 tools/bench/torch_paths.py 2>&1 | tee "$OUT/torch_paths.txt"
    ;;
  sanitize)
    for tool in memcheck racecheck; do
      timeout 240 compute-sanitizer --tool $tool --error-exitcode 3 "$B/gpu_tests" \
        --gtest_filter='GpuExecutorTest.EdgeFilters:GpuExecutorTest.RejectsBadRequests:GpuExecutorTest.AppendUploadsOnlyNewRows' \
        > "$OUT/sanitize_$tool.log" 2>&1
      echo "compute-sanitizer $tool exit: $?"; tail -5 "$OUT/sanitize_$tool.log"
    done
    ;;
esac
