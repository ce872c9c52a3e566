# Session d, call I (tried, not kept): a filter per query's lists uploaded in query groups beside the SDDMM
# (GpuExecutorOptions::overlap_uploads), against the one-shot upload in the same call; then the
# whole gpu_tests suite. Bundle: tools/bench/gpu_bundle.sh build/tests/gpu_tests
# build/tools/gpu_paths_bench
set -u
. tools/bench/device_env.sh > /dev/null
for o in 0 1 0 1; do
  echo "== overlap $o"
  timeout 100 $B/gpu_paths_bench --rows 10000000 --dim 128 --filters bitmap \
    --fractions 0.0001,0.001,0.01 --paths sddmm --reps 20 --stages --overlap $o 2>&1 \
    >> $OUT/overlap.jsonl | grep -E "^(stages|bitmap)" | cut -c1-200
done
timeout 300 $B/gpu_tests > $OUT/gpu_tests.log 2>&1
echo "gpu_tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran|PerQueryListsUpload" $OUT/gpu_tests.log | head -20
gzip -f $OUT/gpu_tests.log
