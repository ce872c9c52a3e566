#!/usr/bin/env bash
# Issue 37's figures on the H200 in one device call (under 8 minutes, six files back), from the
# repository root over a bundle of the two programs:
#   tools/bench/gpu_bundle.sh build/tools/range_pages_bench build/tools/group_by_bench
#   (carry .devpack)
# 1. range_pages_bench: ROWS x DIM rows, 3 queries, 3 runs each: range search at radii passing
#    10, 10,000 and 1,000,000 rows beside the naive way (k = n, then d <= r) and FAISS's CPU
#    range search; pages 1, 10 and 100 of k = 100 by offset and by cursor beside the naive way
#    (k = page x 100, sliced); every answer checked against a float64 brute force.
# 2. group_by_bench: ROWS x DIM rows, 10 queries, k = 10 groups of 2, over 100 groups and over
#    1,000,000 group values, beside the naive way (k = 10,000, then grouped); the forced
#    few_groups (a search per value) runs for the 100 groups only, last.
# Each program has its own time limit (range_pages_bench 230 s, group_by_bench what is left of
# 450 s), so the call ends within 8 minutes; a program cut short keeps the rows it printed.
# Files in $OUT: device.txt, summary.txt, range_pages.txt (JSON lines, then the table),
# range_pages.err, group_by.txt (the table), group_by.err.
# Usage: tools/bench/device_shapes.sh [ROWS] [DEVICE] [DIM]
#   (defaults 10000000, gpu, 64; DEVICE cpu runs the same on the host's cores)
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
rows=${1:-10000000}
device=${2:-gpu}
dim=${3:-64}
work=${WORK:-/tmp/device_shapes}
start=$(date +%s)
summary=$OUT/summary.txt
{
  echo "device_shapes.sh: $(date -u +%FT%TZ), rows $rows, dim $dim, device $device"
  [ -f .devpack/this.rev ] && echo "this revision: $(cat .devpack/this.rev)"
  echo "host: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB"
} > "$summary"
elapsed() { echo $(($(date +%s) - start)); }

rm -rf "$work"
timeout 230 "$B/range_pages_bench" --work "$work/rp" --rows "$rows" --dim "$dim" --queries 3 \
  --reps 3 --device "$device" --passing 10,10000,1000000 --pages 1,10,100 --k 100 \
  > "$OUT/range_pages.txt" 2> "$OUT/range_pages.err"
echo "range_pages_bench exit: $? (at $(elapsed) s)" | tee -a "$summary"
rm -rf "$work/rp"

# group_by_bench takes what is left of 450 s (its 10M-row ingest and load alone are 1.5-2 min).
left=$((450 - $(elapsed)))
[ "$left" -lt 60 ] && left=60
echo "group_by_bench time limit: $left s" >> "$summary"
timeout "$left" "$B/group_by_bench" --work "$work/gb" --rows "$rows" --dim "$dim" --few-groups 100 \
  --many-groups 1000000 --queries 10 --k 10 --group-size 2 --naive-k 10000 --reps 3 \
  --device "$device" --fields many,few --many-strategies many_groups \
  --few-strategies many_groups,few_groups > "$OUT/group_by.txt" 2> "$OUT/group_by.err"
echo "group_by_bench exit: $? (at $(elapsed) s)" | tee -a "$summary"
rm -rf "$work"

{
  grep -E "^range_pages_bench: (ingest|generated)" "$OUT/range_pages.err"
  grep -c MISMATCH "$OUT/range_pages.err" | sed 's/^/range_pages_bench MISMATCH lines: /'
  sed -n '/^# range_pages_bench/,$p' "$OUT/range_pages.txt"
  grep -E "^group_by_bench:" "$OUT/group_by.err"
  cat "$OUT/group_by.txt"
} >> "$summary"
cat "$summary"
