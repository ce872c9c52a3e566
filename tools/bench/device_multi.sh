#!/usr/bin/env bash
# Runs on the H200 through the device tool, from the repository root, over a bundle made by
#   tools/bench/gpu_bundle.sh build-gpu/tests/query_tests build-gpu/tools/sieve
# (carry .devpack): several GPU executors on CUDA device 0 standing in for several GPUs
# (Options::devices, sieve query --devices). Runs the multi-device and placement tests (the
# GPU one among them), then times one collection of ROWS × 128 float16 rows in 8 shards through
# the CLI with --devices 0 and with --devices 0,0,0,0, every answer compared. Logs go to $OUT.
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
rows=${ROWS:-2000000}
device=${DEVICE:-gpu}  # DEVICE=cpu tries the script out where there is no GPU
timeout 200 "$B/query_tests" --gtest_filter='MultiDevice*:ShardPlacement*:RunConcurrently*' \
  > "$OUT/query_tests.log" 2>&1
echo "query_tests exit: $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \] MultiDevice" "$OUT/query_tests.log"
work=/tmp/multi
rm -rf "$work" && mkdir -p "$work"
python3 - "$work" "$rows" <<'PY'
import sys, numpy as np
work, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
np.save(work + "/v.npy", rng.standard_normal((n, 128), dtype=np.float32))
np.save(work + "/q.npy", rng.standard_normal((100, 128), dtype=np.float32))
PY
"$B/sieve" create "$work/db" --collection c --dim 128 --dtype f16 --shards 8 || exit 1
/usr/bin/time -f "ingest %e s" "$B/sieve" ingest "$work/db" --collection c --vectors "$work/v.npy" \
  || exit 1
for f in "" "id < $((rows / 100))" "id < $((rows / 10))"; do
  for devices in 0 0,0,0,0; do
    [ "$device" = cpu ] && extra=(--cpu-executors "$(( ${#devices} / 2 + 1 ))") || extra=()
    for rep in 1 2 3; do
      args=(query "$work/db" --collection c --queries "$work/q.npy" --k 64 --device "$device"
            --devices "$devices" --explain "${extra[@]}")
      [ -n "$f" ] && args+=(--filter "$f")
      "$B/sieve" "${args[@]}" > "$work/out_${devices}.jsonl" 2> "$work/plan.json" || {
        cat "$work/plan.json"; exit 1; }
      python3 - "$work/plan.json" "$devices" "$f" "$rep" <<'PY' | tee -a "$OUT/times.txt"
import json, sys
p = json.load(open(sys.argv[1]))
st = p["stages_ms"]
dev = " ".join("%s:%s=%.2fms" % (d["device"], d["shards"], d["execute_ms"]) for d in p["devices"])
print("filter=%-14r devices=%-8s rep=%s paths=%s execute=%.3f total=%.3f load=%.0f | %s" % (
    sys.argv[3], sys.argv[2], sys.argv[4], sorted({s["path"] for s in p["shards"]}),
    st["execute"], st["total"], st.get("load", 0), dev))
PY
    done
  done
  cmp -s "$work/out_0.jsonl" "$work/out_0,0,0,0.jsonl" && echo "filter=$f: identical results" \
    || echo "filter=$f: RESULTS DIFFER"
done | tee "$OUT/compare.txt"
