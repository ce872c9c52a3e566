# Session 2026-12-03c, call 3: the GPU suite with the TF32 candidate scan of float32 rows, then
# float32 collections with the scan on TF32 (default) and in float32 (--cand-tf32 0), then
# Sieve beside cuVS 26.10 on float32 collections (tools/bench/peer_compare.sh float32).
# Bundle: tools/bench/gpu_bundle.sh build/tests/gpu_tests build/tools/gpu_paths_bench
# Carry .devpack and .deps/cuvs/pack (tools/bench/peers/cuvs_peer/build.sh, with --dtype).
set -u
. tools/bench/device_env.sh > /dev/null
timeout 330 $B/gpu_tests > $OUT/gpu_tests.log 2>&1
echo "gpu_tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran" $OUT/gpu_tests.log | head -20
gzip -f $OUT/gpu_tests.log
run() {  # label, rows, dim, extra flags
  echo "== $1"
  timeout 60 $B/gpu_paths_bench --rows $2 --dim $3 --fractions 1 --paths dense --reps 10 --stages \
    --dtype f32 --filters bitset "${@:4}" 2>&1 >> $OUT/f32.jsonl | grep -E "^(stages|bitset)" \
    | grep -v "n=1000:\|0.001 \|0.0001 " | cut -c1-230
}
run "1M x 1024 f32 l2 tf32" 1000000 1024
run "1M x 1024 f32 l2 float32" 1000000 1024 --cand-tf32 0
run "1M x 1024 f32 ip tf32" 1000000 1024 --metric ip
run "1M x 256 f32 l2 tf32" 1000000 256
run "1M x 256 f32 l2 float32" 1000000 256 --cand-tf32 0
run "10M x 128 f32 l2 float32" 10000000 128 --cand-tf32 0
timeout 300 bash tools/bench/peer_compare.sh float32
