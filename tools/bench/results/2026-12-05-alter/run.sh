#!/usr/bin/env bash
# The --add-attr figure: 1M x 128 float32 rows with 3 attributes, then schema changes, timing
# each and listing the store's files before and after. Usage: run.sh SIEVE_BINARY WORKDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sieve=$1 work=$2
mkdir -p "$work" && cd "$work"
[ -f vectors.npy ] || python3 "$here/gen.py"
rm -rf db
"$sieve" create db --collection items --dim 128 --attr cat:int --attr price:float --attr color:string
t() { local t0 t1; t0=$(date +%s.%N); "$@" >>out.jsonl; t1=$(date +%s.%N); echo "$(echo "$t1 - $t0" | bc) s: ${*:2}" >>times.txt; }
: >out.jsonl; : >times.txt
t "$sieve" ingest db --collection items --vectors vectors.npy --attributes attrs.jsonl 2>/dev/null
python3 "$here/files.py" db >files-before.jsonl
t "$sieve" alter db --collection items --add-attr stock:int --default 0
python3 "$here/files.py" db >files-after-add.jsonl
t "$sieve" alter db --collection items --add-attr note:string
t "$sieve" alter db --collection items --rename-attr price cost
t "$sieve" alter db --collection items --drop-attr color
python3 "$here/files.py" db >files-after-all.jsonl
t "$sieve" count db --collection items --filter "stock = 0 AND note IS NULL AND cost >= 0"
t "$sieve" check db
cat times.txt
python3 "$here/compare.py" files-before.jsonl files-after-add.jsonl
python3 "$here/compare.py" files-before.jsonl files-after-all.jsonl
