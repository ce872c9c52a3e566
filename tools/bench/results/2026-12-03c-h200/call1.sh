# Session 2026-12-03c, call 1: the GPU suite on ffcc811 (the review refactor, not yet GPU-run),
# then the candidate scan at 1M x 1024 (float16, l2, all passing, dense) over tile sizes and
# resident slab sizes: does cutting tiles at 256 MiB slab ends, or the tile size, cost time?
# Bundle: tools/bench/gpu_bundle.sh build/tests/gpu_tests build/tools/gpu_paths_bench
set -u
. tools/bench/device_env.sh > /dev/null
timeout 250 $B/gpu_tests > $OUT/gpu_tests.log 2>&1
echo "gpu_tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran" $OUT/gpu_tests.log | head -20
gzip -f $OUT/gpu_tests.log
run() {  # label, extra flags
  echo "== $1"
  timeout 40 $B/gpu_paths_bench --rows 1000000 --dim 1024 --fractions 1 --filters bitset \
    --paths dense --reps 10 --stages "${@:2}" 2>&1 >> $OUT/scan.jsonl | grep -E "^(stages|bitset)" | cut -c1-220
}
run default
for t in 8 16 64 128; do run "tile ${t} MiB" --cand-tile-mb $t; done
for s in 1048576 4194304; do
  run "slab ${s} KiB" --slab-kb $s
  run "slab ${s} KiB, tile 64 MiB" --slab-kb $s --cand-tile-mb 64
  run "slab ${s} KiB, tile 256 MiB" --slab-kb $s --cand-tile-mb 256
done
