#!/bin/bash
# $1 sieve binary, $2 db
S=$1; D=$2
for b in $(seq 0 39); do
  $S ingest $D --collection c --vectors v$b.npy --ids i$b.npy >/dev/null || echo "ingest fail $b"
  $S delete $D --collection c --filter "id < $((b*500+100))" >/dev/null || echo "delete fail"
  $S compact $D $FORCE >/dev/null || echo "compact fail"
done
