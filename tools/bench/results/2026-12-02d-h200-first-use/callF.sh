# The threshold select's levels at large shards (session d, call F): the dense path, all passing
# and half passing, 4 (the default), 5 and 6 levels. Bundle as callE.sh's.
set -u
. tools/bench/device_env.sh > /dev/null
for shape in "--rows 10000000 --dim 128" "--rows 10000000 --dim 256" "--rows 3000000 --dim 128"; do
  for L in 4 5 6; do
    echo "== $shape --ts-levels $L"
    timeout 100 $B/gpu_paths_bench $shape --fractions 1,0.5 --paths dense --reps 10 --stages \
      --ts-levels $L 2>&1 >> $OUT/levels.jsonl | grep -E "^(stages|bitset)" | cut -c1-220
  done
done
