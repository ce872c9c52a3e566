# Session 2026-12-03, call C: this checkout (lists in row ranges, SDDMM blocks of several tiles,
# one tile a block for rows of more than one chunk a lane): the whole gpu_tests suite, the
# 1M x 1024 SDDMM points that call B found 4 % slower with tiles, and Sieve beside cuVS 26.10
# (tools/bench/peer_compare.sh).
# Bundle: tools/bench/gpu_bundle.sh build/tests/gpu_tests build/tools/gpu_paths_bench; carry
# .devpack and .deps/cuvs/pack (tools/install-cuvs-peer.sh && tools/bench/peers/cuvs_peer/build.sh).
set -u
. tools/bench/device_env.sh > /dev/null
timeout 280 $B/gpu_tests > $OUT/gpu_tests.log 2>&1
echo "gpu_tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran|SddmmBlocks" $OUT/gpu_tests.log | head -20
gzip -f $OUT/gpu_tests.log
timeout 60 $B/gpu_paths_bench --rows 1000000 --dim 1024 --filters bitmap,bitset --fractions 0.001,0.01 \
  --paths sddmm --reps 20 --stages 2>&1 >> $OUT/d1024.jsonl | grep -E "^(bitmap|bitset)" | cut -c1-120
bash tools/bench/peer_compare.sh 2>&1 | tail -45
