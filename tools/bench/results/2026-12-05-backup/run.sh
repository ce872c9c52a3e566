#!/usr/bin/env bash
# Backup figures: 1M x 128 float32 rows with 3 attributes (year:int, cat:string, score:float).
# usage: run.sh SIEVE_BINARY WORKDIR   (WORKDIR holds base.npy/base.csv, append.npy/append.csv and
# queries.npy from gen.py; everything is written there)
set -euo pipefail
S=$1; W=$2; cd "$W"
rm -rf s bk bk2 r
now() { date +%s.%N; }
t() { local a b; a=$(now); "$@" > last.json; b=$(now); echo "$(echo "$b - $a" | bc)"; }
$S create s --collection c --dim 128 --attr year:int --attr cat:string --attr score:float >/dev/null
echo "ingest_1M_s $(t $S ingest s --collection c --vectors base.npy --attributes base.csv 2>/dev/null)"
echo "store_bytes $(du -sb s | cut -f1)"
echo "full_backup_s $(t $S backup s bk) $(cat last.json)"
$S ingest s --collection c --vectors append.npy --attributes append.csv --auto-ids 2>/dev/null >/dev/null
echo "incremental_backup_s $(t $S backup s bk) $(cat last.json)"
echo "restore_s $(t $S restore bk r) $(cat last.json)"
echo "restored_check $($S check r)"
echo "restored_rows $($S stats r)"
# A search's latency through the server, alone and while `sieve backup` (a full backup into a
# fresh directory, through a secondary instance) runs beside it.
/work/main/build/python-env/bin/python - <<'PY'
import json, numpy as np
q = np.load("queries.npy")
for i in range(len(q)):
    open(f"q{i}.json", "w").write(json.dumps({"vectors": [q[i].tolist()], "k": 10}))
PY
$S serve s --listen 127.0.0.1:18777 2>serve.err & SP=$!
trap 'kill $SP 2>/dev/null || true' EXIT
for i in $(seq 1 50); do curl -s -o /dev/null http://127.0.0.1:18777/health && break; sleep 0.2; done
curl -s -o /dev/null -d @q0.json http://127.0.0.1:18777/collections/c/query  # loads the vectors
lat() { curl -s -o /dev/null -w '%{time_total}\n' -d @"q$1.json" http://127.0.0.1:18777/collections/c/query; }
: > alone.txt; for i in $(seq 1 40); do lat $((i % 100)) >> alone.txt; done
: > during.txt
( $S backup s bk2 > during_backup.json; echo done > backup.done ) & BP=$!
rm -f backup.done; i=0
while [ ! -f backup.done ]; do lat $((i % 100)) >> during.txt; i=$((i+1)); done
wait $BP
med() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), "n=" NR}'; }
echo "search_alone_median_s $(med alone.txt)"
echo "search_during_backup_median_s $(med during.txt)"
echo "backup_beside_server $(cat during_backup.json)"
