# Session 2026-12-03c, call 2: the GPU suite, then the candidate scan with (1) the radix selects
# reading their keys eight at a time, counting a warp's equal digits with one atomic, and
# keeping up to ~57k keys in shared memory (opt-in), (2) 256 MiB tiles of whole slabs, one
# batched GEMM a tile. `--cand-tile-mb 32` is the old tile; `--slab-kb 4194304` one slab (a
# plain GEMM instead of the batched one).
# Bundle: tools/bench/gpu_bundle.sh build/tests/gpu_tests build/tools/gpu_paths_bench
set -u
. tools/bench/device_env.sh > /dev/null
timeout 300 $B/gpu_tests > $OUT/gpu_tests.log 2>&1
echo "gpu_tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran" $OUT/gpu_tests.log | head -20
gzip -f $OUT/gpu_tests.log
run() {  # label, rows, dim, extra flags (--fractions 1 unless given)
  echo "== $1"
  local fr=(--fractions 1); [[ " ${*:4} " == *" --fractions "* ]] && fr=()
  timeout 90 $B/gpu_paths_bench --rows $2 --dim $3 "${fr[@]}" --paths dense --reps 10 --stages "${@:4}" \
    2>&1 >> $OUT/scan.jsonl | grep -E "^(stages|bitset|bitmap)" | grep -v "n=1000:\|0.001 " | cut -c1-230
}
run "1M x 1024 default" 1000000 1024 --filters bitset
run "1M x 1024 tile 32" 1000000 1024 --filters bitset --cand-tile-mb 32
run "1M x 1024 one slab" 1000000 1024 --filters bitset --slab-kb 4194304
run "1M x 1024 ip default" 1000000 1024 --filters bitset --metric ip
run "1M x 2048 default" 1000000 2048 --filters bitset
run "1M x 2048 tile 32" 1000000 2048 --filters bitset --cand-tile-mb 32
run "1M x 512 default" 1000000 512 --filters bitset
run "1M x 1024 f32 default" 1000000 1024 --filters bitset --dtype f32
run "1M x 1024 f32 tile 32" 1000000 1024 --filters bitset --dtype f32 --cand-tile-mb 32
run "1M x 1024 bitmap 10% default" 1000000 1024 --filters bitmap --fractions 0.1
run "10M x 128 default (threshold select)" 10000000 128 --filters bitset
run "10M x 1024 default" 10000000 1024 --filters bitset
