#!/usr/bin/env bash
# Sieve and cuVS 26.10 side by side in one device run, over the shapes of issue 21: 10M × 128 and
# 1M × 1024 across selectivities, 10M × 1024 with every row passing; a bitset (one filter for
# the batch), a bitmap (each query its own set) and a bitmap of identical sets; float16, l2,
# k = 64, 100 queries. Prints the ratio table with its geometric mean (analysis/peer_table.py).
#
# Here (the CPU machine):
#   tools/bench/gpu_bundle.sh build/tools/gpu_paths_bench      # .devpack (2.4 MB)
#   tools/install-cuvs-peer.sh && tools/bench/peers/cuvs_peer/build.sh   # .deps/cuvs/pack
# Device tool: command "bash tools/bench/peer_compare.sh [quick|highdim|float32]", carry
# [".devpack", ".deps/cuvs/pack"]. `quick` runs only 10M × 128 (about 4 minutes), `highdim` only
# the dim-1024 shapes, `float32` float32 collections instead (1M × 1024 and 10M × 128, bitset and
# bitmap); the full run fits one 600 s call. Results in $OUT: sieve-*.jsonl, cuvs-*.jsonl, the logs and table.md.
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
mode=${1:-full}
common=(--queries 100 --k 64 --warmup 2 --reps 10)
fractions=0.0001,0.001,0.01,0.1,1
shapes=()
dtype=f16
if [ "$mode" = float32 ]; then
  dtype=f32
  shapes+=("1000000 1024 0.01,0.1,1 bitset,bitmap" "10000000 128 0.01,0.1,1 bitset,bitmap")
else
  [ "$mode" != highdim ] && shapes+=("10000000 128 $fractions bitset,bitmap,bitmap-same")
  if [ "$mode" != quick ]; then
    shapes+=("1000000 1024 0.01,0.1,1 bitset,bitmap" "10000000 1024 1 bitset")
  fi
fi
common+=(--dtype "$dtype")
sieve_files=() peer_files=()
for shape in "${shapes[@]}"; do
  read -r rows dim fr filters <<< "$shape"
  tag=${rows}x${dim}
  timeout 240 "$B/gpu_paths_bench" --rows "$rows" --dim "$dim" --fractions "$fr" \
    --filters "$filters" "${common[@]}" > "$OUT/sieve-$tag.jsonl" 2> "$OUT/sieve-$tag.txt"
  echo "gpu_paths_bench $tag exit: $?"
  sieve_files+=("$OUT/sieve-$tag.jsonl")
  OUT=$OUT timeout 240 bash tools/bench/peers/cuvs_peer/run.sh peer --rows "$rows" --dim "$dim" \
    --fractions "$fr" --filters "$filters" "${common[@]}" > /dev/null 2>&1
  echo "cuvs_peer_bench $tag exit: $?"
  mv "$OUT/cuvs_peer.jsonl" "$OUT/cuvs-$tag.jsonl"; mv "$OUT/cuvs_peer.txt" "$OUT/cuvs-$tag.txt"
  peer_files+=("$OUT/cuvs-$tag.jsonl")
done
join() { local IFS=,; echo "$*"; }
python3 tools/bench/analysis/peer_table.py "$(join "${sieve_files[@]}")" "$(join "${peer_files[@]}")" \
  | tee "$OUT/table.md"
# The device tool brings back at most eight files: the table, and one archive of the rest.
(cd "$OUT" && tar -czf runs.tgz --remove-files -- sieve-* cuvs-* cuvs_peer_ldd.txt)
