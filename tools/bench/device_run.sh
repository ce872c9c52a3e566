#!/usr/bin/env bash
# Runs on the H200 through the device tool, from the repository root, over a bundle made by
#   ../shared/tools/gpu-bundle .bundle build/tests/gpu_tests build/tests/e2e_tests \
#       build/tools/sieve build/gpu/gpu_paths_bench && strip .bundle/bin/* &&
#   mkdir -p .devpack && tar -cJf .devpack/bundle.tar.xz .bundle   (carry .devpack)
# Usage: tools/bench/device_run.sh tests|bench|probe|final|sanitize   (logs go to $OUT)
#   probe: the candidate-selection tests and a subset of the rest, the path bench with per-stage
#          device times (SIEVE_GPU_STAGES=1), and two candidate tile sizes.
#   final: every gpu_tests test, then bench (the bundle need not hold e2e_tests or sieve).
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
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
  probe)
    timeout 240 "$B/gpu_tests" --gtest_filter='GpuExecutorTest.CandidateSelectionAndFallback:GpuExecutorTest.SeveralDenseTilesMerge:GpuExecutorTest.EdgeFilters:*shape0_*:*shape1_*:*shape4_*:*shape5_*' 2>&1 | tee "$OUT/gpu_tests_probe.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure|error" | head -40
    echo "gpu_tests (probe) exit: ${PIPESTATUS[0]}"
    SIEVE_GPU_STAGES=1 timeout 200 "$B/gpu_paths_bench" --reps 10 > "$OUT/bench_stages.jsonl" 2> "$OUT/bench_stages.txt"
    echo "bench (stages) exit: $?"; cat "$OUT/bench_stages.txt"
    for mb in ${TILES:-16 64}; do
      SIEVE_GPU_CAND_TILE_MB=$mb timeout 120 "$B/gpu_paths_bench" --reps 10 --paths gather,dense --fractions 0.01,0.1,1.0 --extra-rows '' > "$OUT/bench_tile$mb.jsonl" 2> "$OUT/bench_tile$mb.txt"
      echo "bench (tile $mb MiB) exit: $?"; grep -v "^stages" "$OUT/bench_tile$mb.txt"
    done
    ;;
  final)
    timeout 230 "$B/gpu_tests" 2>&1 | tee "$OUT/gpu_tests.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure|error" | head -60
    echo "gpu_tests exit: ${PIPESTATUS[0]}"
    # Every test whose searches reach the fused float16 candidate kernel, with it switched on.
    SIEVE_GPU_FUSED=1 timeout 50 "$B/gpu_tests" --gtest_filter='GpuExecutorTest.CandidateSelectionAndFallback:*shape0_f16*:*shape1_f16*:*shape2_f16*:*shape3_f16*:*shape4_f16*' 2>&1 | tee "$OUT/gpu_tests_fused.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure|error" | head -30
    echo "gpu_tests (fused) exit: ${PIPESTATUS[0]}"
    SIEVE_GPU_FUSED=1 SIEVE_GPU_STAGES=1 timeout 60 "$B/gpu_paths_bench" > "$OUT/gpu_paths_bench_fused.jsonl" 2> "$OUT/gpu_paths_bench_fused.txt"
    echo "gpu_paths_bench (fused) exit: $?"; cat "$OUT/gpu_paths_bench_fused.txt"
    SIEVE_GPU_STAGES=1 timeout 70 "$B/gpu_paths_bench" > "$OUT/gpu_paths_bench.jsonl" 2> "$OUT/gpu_paths_bench.txt"
    echo "gpu_paths_bench exit: $?"; grep -v "^stages" "$OUT/gpu_paths_bench.txt"
    timeout 60 python3 tools/bench/torch_paths.py 2>&1 | tee "$OUT/torch_paths.txt"
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
