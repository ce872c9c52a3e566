#!/usr/bin/env bash
# Usage: run.sh SIEVE  — one ingest of each input form into a fresh store, timed.
set -euo pipefail
S=$1
for form in npy parquet; do
  rm -rf db-$form
  $S create db-$form --collection c --dim 128 --attr color:string --attr price:float \
    --attr n:int >/dev/null
  if [ $form = npy ]; then
    args=(--vectors v.npy --attributes a.jsonl)
  else
    args=(--vectors data.parquet:emb --attributes data.parquet)
  fi
  /usr/bin/time -f "$form wall_s=%e user_s=%U sys_s=%S maxrss_kb=%M" \
    $S ingest db-$form --collection c "${args[@]}" 2>&1 >/dev/null | grep -v "rows committed"
  rm -rf db-$form
done
