#!/usr/bin/env bash
# Load run of `sieve serve`: for --max-batch B (batched) and 1 (one at a time), N concurrent
# single-query clients (load_client) for SECONDS each; one JSON line per run on stdout.
#   tools/bench/server_load.sh SIEVE LOAD_CLIENT DB COLLECTION DIM SECONDS "CLIENTS..." [FILTER_PER_CLIENT]
set -euo pipefail
sieve=$1 client=$2 db=$3 coll=$4 dim=$5 secs=$6 clients=$7 filter=${8:-}
for mb in 256 1; do
  out=$(mktemp)
  "$sieve" serve "$db" --listen 127.0.0.1:0 --max-batch "$mb" > "$out" 2>/dev/null &
  pid=$!
  for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.1; done
  port=$(sed -E 's/.*:([0-9]+)".*/\1/' "$out")
  # Warm up (loads the collection into memory).
  "$client" --port "$port" --collection "$coll" --dim "$dim" --clients 1 --seconds 1 > /dev/null
  for n in $clients; do
    args=(--port "$port" --collection "$coll" --dim "$dim" --clients "$n" --seconds "$secs")
    [ -n "$filter" ] && args+=(--filter-per-client "$filter" --filter-mod 50)
    line=$("$client" "${args[@]}")
    echo "{\"max_batch\": $mb, \"filter\": \"${filter}\", ${line#\{}"
  done
  env -u LD_LIBRARY_PATH curl -s "127.0.0.1:$port/metrics" | grep -E '^sieve_batch_requests_(sum|count)|^sieve_search_stage_seconds_total' >&2 || true
  kill -TERM "$pid"; wait "$pid" || true
  rm -f "$out"
done
