# Session 2026-12-03, call E: the host's packing of a filter per query (GpuExecutorOptions::
# filter_pack_threads) on one thread (1) and on the default (0: one per hardware thread, up to
# 8), alternating; host_ms is the prepare (packing into pinned memory) and assembly of each case.
# Each fraction appears twice: the second time the pinned buffers no longer grow.
# Bundle: tools/bench/gpu_bundle.sh build/tools/gpu_paths_bench
set -u
. tools/bench/device_env.sh > /dev/null
nproc
for t in 1 0 1 0; do
  echo "== pack-threads $t"
  timeout 60 $B/gpu_paths_bench --rows 10000000 --dim 128 --filters bitmap \
    --fractions 0.0001,0.01,0.1,0.01,0.1 --paths dense --warmup 1 --reps 3 --pack-threads $t 2>&1 \
    >> $OUT/pack.jsonl | grep -E "^bitmap" | cut -c1-100
done
