# The H200 call of 2026-12-02 (session d): the first-use calibration on the real device
# (FirstUseCalibration::kAlways), the GPU test suites, and the dense path's stages at high dim.
# Bundle: tools/bench/gpu_bundle.sh build/tools/sieve build/tests/gpu_tests build/tests/e2e_tests
#         build/tools/gpu_paths_bench
set -u
. tools/bench/device_env.sh > /dev/null
SIEVE_SOURCE_DIR=$PWD SIEVE_CLI=$B/sieve timeout 150 $B/e2e_tests --gtest_filter='FirstUse*' \
  > $OUT/first_use.log 2>&1
echo "first-use exit $?"; grep -v "^\[ \|^$" $OUT/first_use.log | cut -c1-1500 | head -20
for args in "--rows 1000000 --dim 1024" "--rows 1000000 --dim 1024 --cand-tile-mb 128" \
            "--rows 1000000 --dim 1024 --candidates 0" "--rows 10000000 --dim 128"; do
  echo "== gpu_paths_bench $args"
  timeout 90 $B/gpu_paths_bench $args --fractions 1 --paths dense --reps 10 --stages 2>&1 \
    >> $OUT/paths.jsonl | grep -v "^$" | tail -6
done
bash tools/bench/device_run.sh tests
