#!/usr/bin/env bash
# The planner calibration and the path sweep on the H200, through the device tool, over a bundle
# holding build/tools/sieve, made by
#   tools/bench/gpu_bundle.sh build/tools/sieve     (carry .devpack)
# Usage (each one device call; logs and results go to $OUT):
#   tools/bench/sweep_run.sh calibrate   full GPU calibration twice (two databases), ~2 × 3 min;
#                                        $OUT/calib-db is the first database (bring it back
#                                        into .devpack/calib-db to carry it to `bench`)
#   tools/bench/sweep_run.sh quick       --quick calibration twice, then the bench, one call
#   tools/bench/sweep_run.sh quickpeer   quick, then the cuVS peer bench (tools/bench/peers/cuvs_peer),
#                                        all in one call (quicksweep: without the peer;
#                                        quick1sweep: one calibration, then the sweep)
#   tools/bench/sweep_run.sh bench       the full sweep (16 shapes × 12 fractions, bitset and
#                                        bitmaps), calibrated = .devpack/calib-db when present
set -uo pipefail
. "$(dirname "$0")/device_env.sh"

calibrate() {  # calibrate NAME [flags...]: a fresh database, one calibration, its summary in $OUT
  local name=$1 secs=$2
  shift 2
  rm -rf "/tmp/$name" && "$B/sieve" create "/tmp/$name" --collection c --dim 8 > /dev/null
  timeout "$secs" "$B/sieve" calibrate "/tmp/$name" --device gpu --time-limit-s $((secs > 100 ? secs - 40 : secs - 12)) "$@" > "$OUT/$name.json" 2> "$OUT/$name.txt"
  echo "calibrate $name exit: $?"; tail -1 "$OUT/$name.txt"
}

bench() {  # bench SECONDS DB [extra sieve bench flags...]
  local db_flag=()
  [ -n "${2:-}" ] && [ -d "$2" ] && db_flag=(--db "$2")
  local secs=$1
  shift 2 || shift $#
  db_flag+=("$@")
  echo "sieve bench --device gpu ${db_flag[*]} --csv gpu-sweep.csv" > "$OUT/gpu-sweep.cmd"
  timeout "$secs" "$B/sieve" bench --device gpu --time-limit-s $((secs - 60)) "${db_flag[@]}" --csv "$OUT/gpu-sweep.csv" \
    > "$OUT/gpu-sweep.md" 2> "$OUT/gpu-sweep.txt"
  echo "bench exit: $?"; cat "$OUT/gpu-sweep.md"
}

case "${1:-quick}" in
  calibrate)
    calibrate calib1 270
    calibrate calib2 270
    cp -r /tmp/calib1 "$OUT/calib-db"
    ;;
  quick)
    calibrate calib-quick1 90 --quick
    calibrate calib-quick2 90 --quick
    bench 450 /tmp/calib-quick1
    ;;
  quicksweep)
    # quickpeer without the peer (one archive back).
    calibrate calib-quick1 90 --quick
    calibrate calib-quick2 90 --quick
    bench 300 /tmp/calib-quick1 --max-gb 12   # every shape but 10M x 1024 (20 GB)
    (cd "$OUT" && tar -czf sweep.tgz --remove-files -- *.json *.txt *.md *.csv *.cmd)
    ;;
  quick1sweep)
    # One quick calibration and the sweep.
    calibrate calib-quick1 90 --quick
    bench 300 /tmp/calib-quick1 --max-gb 12
    (cd "$OUT" && tar -czf sweep.tgz --remove-files -- *.json *.txt *.md *.csv *.cmd)
    ;;
  quickpeer)
    # The last call of a session: the quick pair and the sweep, then the cuVS peer (carry
    # .deps/cuvs/pack too), each under its own limit so the whole fits in one 600 s call.
    calibrate calib-quick1 90 --quick
    calibrate calib-quick2 90 --quick
    bench 250 /tmp/calib-quick1 --max-gb 12   # every shape but 10M x 1024 (20 GB)
    timeout 165 bash tools/bench/peers/cuvs_peer/run.sh peer
    echo "cuvs peer exit: $?"
    # The device tool brings back at most 8 files: one archive.
    (cd "$OUT" && tar -czf sweep-and-peer.tgz --remove-files -- *.json *.txt *.md *.csv *.cmd *.jsonl)
    ;;
  bench)
    db=""
    if [ -d .devpack/calib-db ]; then rm -rf /tmp/calib-db && cp -r .devpack/calib-db /tmp/calib-db && db=/tmp/calib-db; fi
    bench 560 "$db"
    ;;
  *) echo "usage: $0 calibrate|quick|quicksweep|quickpeer|bench"; exit 2 ;;
esac
