#!/usr/bin/env bash
# The issue-6 load run on the H200, through the device tool, from the repository root, over a
# bundle of build/tools/sieve and build/tools/load_client (see tools/bench/device_run.sh for
# how the bundle is made and carried). 1M x 128 float32 rows with cat = i % 100; `sieve serve`
# on loopback (device auto = the GPU); 1, 8, 64, 256 concurrent single-query clients for
# SECONDS each, batched (--max-batch 256) and one at a time (--max-batch 1); then the same
# with a different filter per client. Logs go to $OUT.
set -uo pipefail
[ -d .bundle ] || tar -xJf .devpack/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B=$PWD/.bundle/bin
OUT=${OUT:-/tmp/out}
SECONDS_PER_RUN=${1:-5}
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
python3 - "$work" <<'PY'
import sys, numpy as np
w = sys.argv[1]
rng = np.random.default_rng(0)
np.save(w + "/vecs.npy", rng.uniform(-1, 1, (1_000_000, 128)).astype(np.float32))
with open(w + "/attrs.jsonl", "w") as f:
    f.write("".join('{"cat": %d}\n' % (i % 100) for i in range(1_000_000)))
PY
"$B/sieve" create "$work/db" --collection c --dim 128 --attr cat:int
"$B/sieve" ingest "$work/db" --collection c --vectors "$work/vecs.npy" --attributes "$work/attrs.jsonl" 2>/dev/null
{
  bash tools/bench/server_load.sh "$B/sieve" "$B/load_client" "$work/db" c 128 "$SECONDS_PER_RUN" "1 8 64 256"
  bash tools/bench/server_load.sh "$B/sieve" "$B/load_client" "$work/db" c 128 "$SECONDS_PER_RUN" "1 8 64 256" 'cat >= {i}'
} 2>&1 | tee "$OUT/server_load.jsonl"
