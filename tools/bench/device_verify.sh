#!/usr/bin/env bash
# The H200 check of a branch against the previous main, in one device call (at most 600 s, at
# most eight files back), from the repository root over the bundle made by
#   tools/bench/make_verify_bundle.sh BASE_REV        (carry .devpack)
# 1. every gpu_tests test, and beside it the CLI contract tests with --device gpu (e2e_tests
#    with SIEVE_TEST_DEVICE=gpu; both on the one GPU);
# 2. the path benchmark (10M x 128 float16, 100 queries, k = 64, one bitset filter: every path
#    at 0.01 % .. 100 % and 1,000 rows) of the base build and of this one, alternately, two
#    rounds each, and the table of their medians side by side (tools/bench/analysis/
#    compare_paths.py).
# Files in $OUT: device.txt, gpu_tests.log.gz, e2e_gpu.log.gz, bench_base.jsonl,
# bench_new.jsonl, bench.txt (the benchmarks' tables), compare.md, summary.txt.
# Usage: tools/bench/device_verify.sh [REPS]   (REPS timed runs a case, default 10)
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
reps=${1:-10}
{
  echo "device_verify.sh: $(date -u +%FT%TZ)"
  [ -f .devpack/base.rev ] && echo "base revision: $(cat .devpack/base.rev)"
  [ -f .devpack/this.rev ] && echo "this revision: $(cat .devpack/this.rev)"
} > "$OUT/summary.txt"

SIEVE_SOURCE_DIR=$PWD SIEVE_CLI=$B/sieve SIEVE_TEST_DEVICE=gpu timeout 220 "$B/e2e_tests" > "$OUT/e2e_gpu.log" 2>&1 &
e2e=$!
timeout 250 "$B/gpu_tests" > "$OUT/gpu_tests.log" 2>&1
echo "gpu_tests exit: $?" | tee -a "$OUT/summary.txt"
wait $e2e
echo "e2e_tests (--device gpu) exit: $?" | tee -a "$OUT/summary.txt"
for log in gpu_tests e2e_gpu; do
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|^\[  FAILED  \]" "$OUT/$log.log" | sort | uniq -c |
    sed "s/^/$log: /" | head -20 | tee -a "$OUT/summary.txt"
  gzip -f "$OUT/$log.log"
done

: > "$OUT/bench_base.jsonl"
: > "$OUT/bench_new.jsonl"
: > "$OUT/bench.txt"
for round in 1 2; do
  for build in base new; do
    bin=$B/gpu_paths_bench
    [ "$build" = base ] && bin=$B/base-gpu_paths_bench
    echo "== round $round, $build build" >> "$OUT/bench.txt"
    timeout 75 "$bin" --reps "$reps" >> "$OUT/bench_$build.jsonl" 2>> "$OUT/bench.txt"
    echo "gpu_paths_bench round $round $build exit: $?" | tee -a "$OUT/summary.txt"
  done
done
python3 tools/bench/analysis/compare_paths.py "$OUT/bench_base.jsonl" "$OUT/bench_new.jsonl" \
  > "$OUT/compare.md" 2>> "$OUT/summary.txt"
cat "$OUT/compare.md" | tee -a "$OUT/summary.txt"
