#!/usr/bin/env bash
# Issue 34's hybrid figures on the H200 in one device call (under 6 minutes, five files back),
# from the repository root over the bundle of
#   tools/bench/gpu_bundle.sh build/tools/hybrid_bench build/tests/engine_tests \
#                             build/tests/e2e_tests build/tools/sieve          (carry .devpack)
# 1. the text and hybrid tests on the GPU: engine_tests TextSearch* (kAuto searches on the GPU:
#    hybrid answers against fusing the two exact lists, the text side beside the vector side)
#    and e2e_tests Bm25CliTest.* with --device gpu;
# 2. hybrid_bench over the synthetic Zipfian corpus: DOCS documents with DIM float16 vectors,
#    200 queries of one vector and one text, k = 10, depth 100, rrf, under no filter, a 10 % and
#    a 1 % filter; on the GPU, then on the host's cores (--devices gpu,cpu): the hybrid search
#    beside its two searches run separately, every answer checked against fusing those.
# Files in $OUT: device.txt, summary.txt, tests.log.gz, hybrid.txt (the table), hybrid.err.
# Usage: tools/bench/device_hybrid.sh [DOCS] [DIM]   (defaults 1000000, 384)
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
docs=${1:-1000000}
dim=${2:-384}
start=$(date +%s)
summary=$OUT/summary.txt
{
  echo "device_hybrid.sh: $(date -u +%FT%TZ), docs $docs, dim $dim"
  [ -f .devpack/this.rev ] && echo "this revision: $(cat .devpack/this.rev)"
  echo "host: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB"
} > "$summary"
timeout 120 "$B/engine_tests" --gtest_filter='TextSearch*' > "$OUT/tests.log" 2>&1
echo "engine_tests TextSearch* exit: $?" | tee -a "$summary"
SIEVE_SOURCE_DIR=$PWD SIEVE_CLI=$B/sieve SIEVE_TEST_DEVICE=gpu timeout 120 "$B/e2e_tests" \
  --gtest_filter='Bm25CliTest.*' >> "$OUT/tests.log" 2>&1
echo "e2e_tests Bm25CliTest.* --device gpu exit: $?" | tee -a "$summary"
grep -E "^\[ +(OK|FAILED) +\]|PASSED|tests ran" "$OUT/tests.log" >> "$summary"
gzip -f "$OUT/tests.log"
timeout $((330 - ($(date +%s) - start))) "$B/hybrid_bench" --work /tmp/device_hybrid \
  --corpus zipf --docs "$docs" --dim "$dim" --dtype f16 --queries 200 --warmup 20 \
  --devices gpu,cpu > "$OUT/hybrid.txt" 2> "$OUT/hybrid.err"
echo "hybrid_bench exit: $? (at $(($(date +%s) - start)) s)" | tee -a "$summary"
rm -rf /tmp/device_hybrid
cat "$OUT/hybrid.err" "$OUT/hybrid.txt" >> "$summary"
cat "$summary"
