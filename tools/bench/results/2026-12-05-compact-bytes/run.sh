#!/usr/bin/env bash
# Issue 33, item 5: bytes before and after `sieve compact`, as CompactResult reports them and as
# the file system holds them (the sum of every file of the store directory, read by this
# script before the command starts and after it exits).
# usage: run.sh SIEVE PYTHON WORKDIR > results.jsonl
set -euo pipefail
sieve=$1; py=$2; work=$3
mkdir -p "$work" && cd "$work"
"$py" -c "import numpy as np, json; rng = np.random.default_rng(1); \
  np.save('v.npy', rng.standard_normal((20000, 32)).astype(np.float32)); \
  open('a.jsonl', 'w').writelines(json.dumps({'year': 1990 + i % 30, 'cat': 'c%d' % (i % 50)}) + '\n' for i in range(20000))"
bytes() { "$py" -c "import os, sys; d = sys.argv[1]; print(sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)))" "$1"; }
for run in 1 2 3; do
  for n in 0 100 1000 5000; do
    for force in "" --force; do
      db=db-$run-$n${force:+-force}
      rm -rf "$db"
      "$sieve" create "$db" --collection c --dim 32 --attr year:int --attr cat:string >/dev/null
      "$sieve" ingest "$db" --collection c --vectors v.npy --attributes a.jsonl >/dev/null
      if [ "$n" -gt 0 ]; then "$sieve" delete "$db" --collection c --filter "id < $n" >/dev/null; fi
      du_before=$(bytes "$db")
      out=$("$sieve" compact "$db" $force)
      du_after=$(bytes "$db")
      "$sieve" check "$db" >/dev/null
      echo "{\"run\": $run, \"deleted\": $n, \"force\": $([ -n "$force" ] && echo true || echo false), \"du_before\": $du_before, \"du_after\": $du_after, \"compact\": $out}"
    done
  done
done
