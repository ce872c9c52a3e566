#!/usr/bin/env bash
# The int8 candidate scan (issue 36, GpuExecutorOptions::candidate_int8) on the device in one
# call (under 8 minutes, seven files back), from the repository root over the bundle made by
#   tools/bench/gpu_bundle.sh build/tests/gpu_tests build/tests/e2e_tests \
#                             build/tools/gpu_paths_bench                 (carry .devpack)
# 1. the int8 tests of gpu_tests (Int8Scan*: exact against the float64 oracle for l2, ip and
#    cosine, float16 and float32 rows, k 1..4,096, one filter and a filter per query, random,
#    clustered and near-tie rows, the counter and the result's products proving int8 ran), and
#    the candidate scan's other tests beside them; and explain through the public API
#    (e2e_tests ExplainPlanTest.*: "int8" products with candidate_int8);
# 2. gpu_paths_bench on the dense path, every row passing, 100 queries, each case on an
#    executor without int8 and one with it (--int8 both: same process, answers compared), at
#    the issue's shapes: 10M x 128 float16 and float32 (k = 64), 1M x 1024 and 10M x 1024
#    float16 (k = 64), 5M x 256 float32 (k = 100); uniform rows, and clustered rows where the
#    bands widen (not 10M x 1024, for time);
# 3. a compact table of the medians, the products that ran and the rows a query kept and
#    rescored (tools/bench/results/ takes it).
# Files in $OUT: device.txt, summary.txt, gpu_tests.log.gz, e2e.log.gz, bench.jsonl, bench.txt,
# table.md.
# Usage: tools/bench/device_int8.sh [REPS]   (REPS timed runs a case, default 10)
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
reps=${1:-10}
start=$(date +%s)
echo "device_int8.sh: $(date -u +%FT%TZ)" > "$OUT/summary.txt"

SIEVE_SOURCE_DIR=$PWD timeout 100 "$B/e2e_tests" --gtest_filter='ExplainPlanTest.*' \
  > "$OUT/e2e.log" 2>&1 &
e2e=$!
timeout 170 "$B/gpu_tests" \
  --gtest_filter='Int8Scan*:GpuExecutorTest.Candidate*:GpuExecutorTest.Tf32*' \
  > "$OUT/gpu_tests.log" 2>&1
echo "gpu_tests (int8) exit: $?" | tee -a "$OUT/summary.txt"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|^\[  FAILED  \]|int8 scan:" "$OUT/gpu_tests.log" |
  sort | uniq -c | head -20 | tee -a "$OUT/summary.txt"
gzip -f "$OUT/gpu_tests.log"
wait $e2e
echo "e2e_tests (ExplainPlanTest) exit: $?" | tee -a "$OUT/summary.txt"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|^\[  FAILED  \]" "$OUT/e2e.log" |
  sort | uniq -c | head -10 | tee -a "$OUT/summary.txt"
gzip -f "$OUT/e2e.log"

: > "$OUT/bench.jsonl"
: > "$OUT/bench.txt"
# rows dim dtype k data timeout; a run is skipped, or cut short, so that the call ends by 450 s.
run() {
  local left=$(( 450 - ($(date +%s) - start) ))
  if [ "$left" -lt 20 ]; then
    echo "bench $1 x $2 $3 k=$4 $5 skipped (time)" | tee -a "$OUT/summary.txt"
    return
  fi
  local limit=$(( $6 < left ? $6 : left ))
  echo "== $1 x $2 $3 k=$4 $5" >> "$OUT/bench.txt"
  timeout "$limit" "$B/gpu_paths_bench" --rows "$1" --dim "$2" --dtype "$3" --k "$4" --data "$5" \
    --queries 100 --paths dense --fractions 1 --extra-rows 0 --warmup 2 --reps "$reps" \
    --int8 both >> "$OUT/bench.jsonl" 2>> "$OUT/bench.txt"
  echo "bench $1 x $2 $3 k=$4 $5 exit: $? ($(( $(date +%s) - start )) s in)" |
    tee -a "$OUT/summary.txt"
}
run 10000000 128 f16 64 uniform 60
run 10000000 128 f32 64 uniform 60
run 5000000 256 f32 100 uniform 60
run 1000000 1024 f16 64 uniform 45
run 10000000 1024 f16 64 uniform 150
run 10000000 128 f16 64 clustered 60
run 10000000 128 f32 64 clustered 60
run 5000000 256 f32 100 clustered 60
run 1000000 1024 f16 64 clustered 45

python3 - "$OUT/bench.jsonl" > "$OUT/table.md" 2>> "$OUT/summary.txt" <<'EOF'
import json, sys
rows = []
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r.get("passing", 0) == 0 or "median_ms" not in r:
        continue
    rows.append(r)
print("| shape | dtype | k | data | products | median ms | kept/query | band/query | fallbacks |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| %d x %d | %s | %d | %s | %s | %.3f | %.0f | %.0f | %d |" % (
        r["rows"], r["dim"], r["dtype"], r["k"], r.get("data", "?"), r["products"],
        r["median_ms"], r.get("kept_per_query", 0), r.get("band_per_query", 0),
        r.get("fallbacks", 0)))
EOF
cat "$OUT/table.md" | tee -a "$OUT/summary.txt"
echo "total $(( $(date +%s) - start )) s" | tee -a "$OUT/summary.txt"
