# Session 2026-12-03b, call A: cuBLAS alone at the dense shapes (gemm_probe.py), the GPU suite on
# the candidate band, the dense path before (base = 3206e75) and after the band, and where the
# 1M x 1024 dense search's kernels spend their time (ncu).
# Bundle: tools/bench/gpu_bundle.sh build/tests/gpu_tests build/tools/gpu_paths_bench \
#         .variants/bin/base-gpu_paths_bench
set -u
R=tools/bench/results/2026-12-03b-h200-dense
. tools/bench/device_env.sh > /dev/null
timeout 330 $B/gpu_tests > $OUT/gpu_tests.log 2>&1
echo "gpu_tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran" $OUT/gpu_tests.log | head -20
gzip -f $OUT/gpu_tests.log
for shape in "--rows 1000000 --dim 1024" "--rows 1000000 --dim 512" "--rows 1000000 --dim 2048"; do
  for bin in base-gpu_paths_bench gpu_paths_bench; do
    echo "== $bin $shape"
    timeout 120 $B/$bin $shape --fractions 1,0.1 --filters bitset,bitmap --paths dense --reps 10 \
      --stages 2>&1 >> $OUT/dense-$bin.jsonl | grep -E "^(stages|bitset|bitmap)" | cut -c1-230
  done
done
timeout 200 python3 $R/gemm_probe.py > $OUT/gemm_probe.txt 2>&1; echo "probe exit $?"
cat $OUT/gemm_probe.txt | cut -c1-150
timeout 120 ncu --metrics gpu__time_duration.sum --print-summary per-kernel $B/gpu_paths_bench \
  --rows 1000000 --dim 1024 --fractions 1 --paths dense --reps 1 --warmup 0 > $OUT/ncu-1m1024.txt 2>&1
echo "ncu exit $?"; grep -E "^  [A-Za-z_]|gpu__time_duration" $OUT/ncu-1m1024.txt | \
  sed -E "s/ +/ /g" | cut -c1-180 | head -60
for bin in base-gpu_paths_bench gpu_paths_bench; do
  echo "== $bin --rows 10000000 --dim 1024"
  timeout 150 $B/$bin --rows 10000000 --dim 1024 --fractions 1 --paths dense --reps 5 --stages \
    2>&1 >> $OUT/dense-$bin.jsonl | grep -E "^(stages|bitset|bitmap)" | cut -c1-230
done
