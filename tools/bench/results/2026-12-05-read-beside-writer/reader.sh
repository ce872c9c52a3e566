#!/bin/bash
S=$1; D=$2; N=$3
fails=0
for i in $(seq 1 $N); do
  for cmd in "check $D" "count $D --collection c" "query $D --collection c --queries q.npy --k 5" "export $D --collection c"; do
    out=$($S $cmd 2>&1 >/dev/null) || { fails=$((fails+1)); echo "FAIL $cmd: $out" | head -c 300; echo; }
  done
done
echo "fails=$fails"
