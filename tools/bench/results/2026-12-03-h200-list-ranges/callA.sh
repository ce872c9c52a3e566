# Session 2026-12-03, call A: a filter per query's lists uploaded in row ranges beside the SDDMM
# (GpuExecutorOptions::list_upload_groups), against one upload first (1) in the same call; then
# the new test under compute-sanitizer and the whole gpu_tests suite.
# Bundle: tools/bench/gpu_bundle.sh build/tests/gpu_tests build/tools/gpu_paths_bench
set -u
. tools/bench/device_env.sh > /dev/null
for rep in 1 2; do
  for g in 1 0 4 16; do
    echo "== list-groups $g"
    timeout 100 $B/gpu_paths_bench --rows 10000000 --dim 128 --filters bitmap \
      --fractions 0.0001,0.001,0.01 --paths sddmm --reps 20 --stages --list-groups $g 2>&1 \
      >> $OUT/ranges.jsonl | grep -E "^(stages|bitmap)" | cut -c1-220
  done
done
timeout 200 compute-sanitizer --tool memcheck $B/gpu_tests --gtest_filter='*ListsInRowRanges*' > $OUT/memcheck.log 2>&1
echo "memcheck exit: $?"; tail -3 $OUT/memcheck.log
timeout 300 $B/gpu_tests > $OUT/gpu_tests.log 2>&1
echo "gpu_tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran" $OUT/gpu_tests.log | head -20
gzip -f $OUT/gpu_tests.log
