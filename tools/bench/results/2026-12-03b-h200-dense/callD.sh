# Session 2026-12-03b, call D: the GPU suite after the float16 bound was tightened to one rounding
# (cuBLAS told to sum split products in float32) and the candidate lists sized for k >= 8, then
# 1M x 1024 all passing once more (l2, ip).
# Bundle: tools/bench/gpu_bundle.sh build/tests/gpu_tests build/tools/gpu_paths_bench
set -u
. tools/bench/device_env.sh > /dev/null
timeout 250 $B/gpu_tests > $OUT/gpu_tests.log 2>&1
echo "gpu_tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran" $OUT/gpu_tests.log | head -20
grep -A8 "RUN.*ThresholdSelectGatherPath\|RUN.*CandidateBand" $OUT/gpu_tests.log | grep -E "Failure|Expected|Which|trace|OK \]" | head -20
gzip -f $OUT/gpu_tests.log
for m in l2 ip; do
  timeout 30 $B/gpu_paths_bench --rows 1000000 --dim 1024 --metric $m --fractions 1 --filters bitset \
    --paths dense --reps 10 --stages 2>&1 >> $OUT/dense.jsonl | grep -E "^(stages|bitset)" | cut -c1-200
done
