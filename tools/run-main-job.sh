#!/usr/bin/env bash
# The README's main job: builds Sieve, loads Fashion-MNIST (Debian's dataset-fashion-mnist,
# 60,000 x 784, with its label as an int attribute) into a new database through the CLI, and
# runs filtered queries, printing the results and the plan of each.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/build.sh"
sieve="$root/build/tools/sieve"
work="$root/build/main-job"
db="$work/fashion.db"
rm -rf "$work"
mkdir -p "$work"
python3 "$root/tools/fashion_mnist.py" --out "$work/data" --queries 8

step() { printf '\n== %s\n$ %s\n' "$1" "${*:2}" >&2; "${@:2}"; }

step "create a collection" "$sieve" create "$db" --collection fashion --dim 784 --metric l2 \
  --attr label:int --attr category:string --attr idx:int
step "ingest 60,000 images with their labels" "$sieve" ingest "$db" --collection fashion \
  --vectors "$work/data/train.npy" --attributes "$work/data/train.jsonl" --batch-rows 20000
step "stats" "$sieve" stats "$db" --collection fashion
step "5 nearest trousers to each of 8 test images (one filter: a bitset)" \
  "$sieve" query "$db" --collection fashion --queries "$work/data/queries.npy" --k 5 \
  --filter "label = 1" --explain
step "5 nearest bags or ankle boots, by category name" \
  "$sieve" query "$db" --collection fashion --queries "$work/data/queries.npy" --k 5 \
  --filter "category IN ('Bag', 'Ankle boot')" --explain
step "a rare filter (few passing rows: the sparse path)" \
  "$sieve" query "$db" --collection fashion --queries "$work/data/queries.npy" --k 3 \
  --filter "(label = 9 OR category = 'Sneaker') AND idx < 2000 AND NOT idx BETWEEN 100 AND 199" \
  --explain
step "each query filtered to its own test label (a filter per query: a bitmap)" \
  "$sieve" query "$db" --collection fashion --queries "$work/data/queries.npy" --k 5 \
  --filters "$work/data/filters.txt" --explain
for p in sddmm gather dense; do
  step "the same bitset query forced onto the $p path" \
    "$sieve" query "$db" --collection fashion --queries "$work/data/queries.npy" --k 3 \
    --filter "label <= 4" --path "$p" --explain
done
step "unfiltered" "$sieve" query "$db" --collection fashion \
  --queries "$work/data/queries.npy" --k 3 --explain
step "delete every sandal, then query for sandals" "$sieve" delete "$db" --collection fashion \
  --filter "label = 5"
"$sieve" query "$db" --collection fashion --queries "$work/data/queries.npy" --k 3 \
  --filter "label = 5"
step "check every invariant of the store" "$sieve" check "$db"
echo "main job: done" >&2
