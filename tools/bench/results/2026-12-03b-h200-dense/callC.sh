# Session 2026-12-03b, call C: the GPU suite on float16 dot products for the candidate scan; the
# dense path before (band = f788019: the band alone) and after, at 1M x 1024 (l2, ip) and
# 10M x 1024; then the side-by-side with cuVS 26.10 over the dim-1024 shapes.
# Bundle: tools/bench/gpu_bundle.sh build/tests/gpu_tests build/tools/gpu_paths_bench \
#         .variants/bin/band-gpu_paths_bench; carry .devpack and .deps/cuvs/pack.
set -u
. tools/bench/device_env.sh > /dev/null
timeout 260 $B/gpu_tests > $OUT/gpu_tests.log 2>&1
echo "gpu_tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran" $OUT/gpu_tests.log | head -20
grep -A12 "RUN.*CandidateBand" $OUT/gpu_tests.log | grep -E "Failure|Expected|actual|Which|OK \]|FAILED" | head -20
gzip -f $OUT/gpu_tests.log
for run in "band-gpu_paths_bench" "gpu_paths_bench" "gpu_paths_bench --cand-sample-x 0.5" \
           "band-gpu_paths_bench --metric ip" "gpu_paths_bench --metric ip"; do
  echo "== $run --rows 1000000 --dim 1024"
  set -- $run
  timeout 40 $B/$1 "${@:2}" --rows 1000000 --dim 1024 --fractions 1 --filters bitset --paths dense \
    --reps 10 --stages 2>&1 >> $OUT/dense-$1.jsonl | grep -E "^(stages|bitset)" | cut -c1-200
done
for bin in band-gpu_paths_bench gpu_paths_bench; do
  echo "== $bin --rows 10000000 --dim 1024"
  timeout 60 $B/$bin --rows 10000000 --dim 1024 --fractions 1 --paths dense --reps 5 --stages \
    2>&1 >> $OUT/dense10m-$bin.jsonl | grep -E "^(stages|bitset)" | cut -c1-200
done
timeout 230 bash tools/bench/peer_compare.sh highdim 2>&1 | tail -25
