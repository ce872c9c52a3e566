# Session 2026-12-03, call B: the SDDMM kernel taking several tiles a block with the next tile's
# ids loaded beside the current rows and norms ("tiles", this checkout) against call A's
# ("ranges", cf423c1, built by tools/bench/build_variant.sh cf423c1 ranges), alternating in one
# call; then the whole gpu_tests suite of this checkout.
# Bundle: tools/bench/gpu_bundle.sh build/tests/gpu_tests build/tools/gpu_paths_bench
#   .variants/bin/ranges-gpu_paths_bench
set -u
. tools/bench/device_env.sh > /dev/null
run() {  # binary label args...
  local bin=$1 label=$2; shift 2
  echo "== $label $*"
  timeout 120 $B/$bin "$@" --reps 20 --stages 2>&1 >> $OUT/$label.jsonl | grep -E "^(stages|bitmap|bitset)" | cut -c1-200
}
for rep in 1 2; do
  for v in ranges tiles; do
    bin=gpu_paths_bench; [ $v = ranges ] && bin=ranges-gpu_paths_bench
    run $bin $v --rows 10000000 --dim 128 --filters bitmap,bitset --fractions 0.0001,0.001,0.01 --paths sddmm
    run $bin $v --rows 1000000 --dim 1024 --filters bitmap,bitset --fractions 0.001,0.01 --paths sddmm
  done
done
timeout 300 $B/gpu_tests > $OUT/gpu_tests.log 2>&1
echo "gpu_tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran" $OUT/gpu_tests.log | head -20
gzip -f $OUT/gpu_tests.log
