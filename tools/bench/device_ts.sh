#!/usr/bin/env bash
# Runs on the H200 through the device tool, from the repository root, over a bundle made by
#   ../shared/tools/gpu-bundle .bundle build/tests/gpu_tests build/gpu/threshold_select_bench \
#       build/gpu/gpu_paths_bench && strip .bundle/bin/* &&
#   mkdir -p .devpack && tar -cJf .devpack/bundle.tar.xz .bundle   (carry .devpack)
# Usage: tools/bench/device_ts.sh probe|round|compare|kernel|variants|gather|final|finalts|sanitize   (logs go to $OUT)
#   gather: this checkout's executor tests, then gather at 1 % for this checkout and every
#          variant alternately, three rounds.
#   compare: a short round for engine variants (build_variant.sh): the executor, threshold-select
#          and page-pool tests of this checkout and of each variant whose gpu_tests are bundled
#          (the variants under test; the others are timing baselines), the threshold-select
#          kernel bench of every build, then gather at 0.1 % and 1 % and dense at 100 % for every
#          build alternately (twice each), this checkout's dense with 3 and 5 threshold levels,
#          the kernels of the gather at 1 % under ncu (this checkout and the variants under
#          test) and of this checkout's dense at 100 %, and racecheck + synccheck over
#          ThresholdSelectTest.SanitizerSmall.
#   round: see below (one optimisation round, all in one call). Kernel variants from other
#          branches (tools/bench/build_variant.sh REV NAME) bundled beside as
#          NAME-threshold_select_bench / NAME-gpu_paths_bench / NAME-gpu_tests are tested (their
#          executor and threshold-select tests) and timed too, gather at 1 % also with
#          SIEVE_GPU_CAND_SAMPLE_X=2 and 4.
#   sanitize: compute-sanitizer memcheck over the threshold-select tests and the gathered
#          threshold path; racecheck and synccheck over one small case (see below).
#   final: the bundle also holds build/tests/e2e_tests and build/tools/sieve. Every gpu_tests
#          test, with the CLI contract tests on --device gpu beside it (both on the one GPU),
#          then the path bench (10M x 128 f16, 100 queries, k = 64) and the PyTorch baseline.
#   kernel, variants, finalts: see their comments below (threshold-select kernel changes; the
#          wgmma and finalwg modes of session 6 became kernel and finalts).
#   probe: the threshold-select tests, an ncu profile of one threshold-select launch at 1M keys,
#          the threshold-select bench at 10M keys (no repair cases), the dense path at 10M rows
#          with the threshold select on and off (per-stage device times).
set -uo pipefail
. "$(dirname "$0")/device_env.sh"
# final and finalts: every gpu_tests test with the CLI contract tests on --device gpu beside it
# (both on the one GPU), the log compressed; then the path bench, every path and fraction.
FinalTests() {
  SIEVE_CLI=$B/sieve SIEVE_TEST_DEVICE=gpu timeout 200 "$B/e2e_tests" > "$OUT/e2e_gpu.log" 2>&1 &
  local e2e=$!
  timeout 240 "$B/gpu_tests" > "$OUT/gpu_tests.log" 2>&1
  echo "gpu_tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/gpu_tests.log" | head -20
  wait $e2e; echo "e2e_tests (gpu) exit: $?"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/e2e_gpu.log" | head -20
  gzip -f "$OUT/gpu_tests.log"
}
# This build's kernel bench with each kernel named ($2...: SIEVE_GPU_WGMMA values), headed "$1".
KernelBenches() {
  local head=$1 w
  shift
  for w in "$@"; do
    echo "== ${head}ts bench SIEVE_GPU_WGMMA=$w" >> "$OUT/ts_bench.txt"
    SIEVE_GPU_WGMMA=$w timeout 60 "$B/threshold_select_bench" --reps 5 --repair-reps 0 > /dev/null 2>> "$OUT/ts_bench.txt"
    echo "ts bench wgmma=$w exit: $?"
  done
}
# The kernel bench of every bundled variant (NAME-threshold_select_bench), one round ($1).
VariantBenches() {
  local v
  for v in "$B"/*-threshold_select_bench; do
    [ -x "$v" ] || continue
    echo "== round $1 $(basename "$v")" >> "$OUT/ts_bench.txt"
    timeout 60 "$v" --reps 5 --repair-reps 0 > /dev/null 2>> "$OUT/ts_bench.txt"
    echo "$(basename "$v") exit: $?"
  done
}
# ncu, the full set of sections, of one launch of the kernel bench's exact case (launch 12) with
# each kernel named ($2...: SIEVE_GPU_WGMMA values) into $OUT/$1<kernel>.txt.gz.
NcuExact() {
  local prefix=$1 w
  shift
  for w in "$@"; do
    SIEVE_GPU_WGMMA=$w timeout 120 ncu --kernel-name regex:SelectKernel --launch-skip 12 --launch-count 1 --set full --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio \
      "$B/threshold_select_bench" --reps 1 --warmup 1 --repair-reps 0 > "$OUT/$prefix$w.txt" 2>&1
    echo "ncu (wgmma=$w) exit: $?"
    grep -E "Duration|Registers Per|Achieved Occupancy|Throughput|Busy|Eligible|Issued Warp|Warp Cycles|Hit Rate|stalled" "$OUT/$prefix$w.txt" | awk '!/stalled/ || $NF+0 > 0.2' | head -40
    gzip -f "$OUT/$prefix$w.txt"
  done
}
FinalPaths() {
  SIEVE_GPU_STAGES=1 timeout 90 "$B/gpu_paths_bench" --reps 10 > "$OUT/gpu_paths_bench.jsonl" 2> "$OUT/gpu_paths_bench.txt"
  echo "gpu_paths_bench exit: $?"; grep -v "^stages" "$OUT/gpu_paths_bench.txt"; grep "^stages" "$OUT/gpu_paths_bench.txt" | grep -E "dense n=10000000|gather n=100000 |gather n=10000 "
}

case "${1:-probe}" in
  probe)
    SIEVE_GPU_DEBUG=1 timeout 120 "$B/gpu_tests" --gtest_filter='ThresholdSelect*:PagePool*:GpuExecutorTest.ThresholdSelectDensePath' > "$OUT/ts_tests.log" 2>&1
    grep "overflowed" "$OUT/ts_tests.log" | sort | uniq -c | head
    echo "ts tests exit: $?"; grep -E "^\[  (PASSED|FAILED) " "$OUT/ts_tests.log" | head -40
    grep -A14 "Failure" "$OUT/ts_tests.log" | grep -E "Failure|Which is|trace|gpu_executor_test.cc:[0-9]+: [a-z]|threshold_select_test.cc:[0-9]+: [a-z]" | head -60
    [ -n "${NCU:-}" ] && timeout 150 ncu --clock-control none --kernel-name regex:SelectKernel --launch-skip 7 --launch-count 1 \
      --section SpeedOfLight --section Occupancy \
      --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,smsp__inst_executed.sum,smsp__cycles_active.avg \
      "$B/threshold_select_bench" --rows 1000000 --reps 2 --warmup 1 --repair-reps 0 > "$OUT/ncu.txt" 2>&1
    echo "ncu exit: $?"; grep -E "Duration|Grid Size|Registers|Achieved Occupancy|stalled|inst_executed|cycles_active|Throughput" "$OUT/ncu.txt" | awk '$NF+0 > 0.05 || /Duration|Grid|inst|cycles/' | head -40
    timeout 150 "$B/threshold_select_bench" --reps 5 --repair-reps 0 > "$OUT/ts_bench.jsonl" 2> "$OUT/ts_bench.txt"
    echo "ts bench exit: $?"; cat "$OUT/ts_bench.txt"
    for t in 1 0; do
      SIEVE_GPU_DEBUG=1 SIEVE_GPU_THRESHOLD=$t SIEVE_GPU_STAGES=1 timeout 120 "$B/gpu_paths_bench" --reps 5 --paths dense --fractions 1.0 --extra-rows '' > "$OUT/dense_t$t.jsonl" 2> "$OUT/dense_t$t.txt"
      echo "dense (threshold=$t) exit: $?"; cat "$OUT/dense_t$t.txt"
    done
    ;;
  round)
    # One optimisation round: the threshold-select and engine threshold tests, the kernel bench
    # (no repair cases), one ncu profile at 10M keys, the engine paths at 10M rows, then gather
    # and dense through the threshold select with at most 4, 5 and 6 levels, the gather with
    # the fused candidate kernel (SIEVE_GPU_FUSED=1) and with one 64 MiB candidate tile, and
    # memcheck over the threshold-select tests; then every kernel of a gather at 1 % and a dense
    # at 100 % with its ncu device time. Seven files come back (the device tool returns
    # at most eight).
    timeout 150 "$B/gpu_tests" --gtest_filter='ThresholdSelect*:PagePool*:GpuExecutorTest.Threshold*' > "$OUT/ts_tests.log" 2>&1
    echo "ts tests exit: $?"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/ts_tests.log" | head -20
    timeout 120 "$B/threshold_select_bench" --reps 7 --repair-reps 0 > "$OUT/bench.jsonl" 2> "$OUT/ts_bench.txt"
    echo "ts bench exit: $?"; cat "$OUT/ts_bench.txt"
    # Kernel variants built by tools/bench/build_variant.sh and bundled beside (NAME-...).
    for v in "$B"/*-threshold_select_bench; do
      [ -x "$v" ] || continue
      echo "== variant $(basename "$v")" | tee -a "$OUT/ts_bench.txt"
      timeout 120 "$v" --reps 7 --repair-reps 0 >> "$OUT/bench.jsonl" 2>> "$OUT/ts_bench.txt"
      echo "variant exit: $?"; sed -n '/^== variant '"$(basename "$v")"'/,$p' "$OUT/ts_bench.txt" | grep -E "b_exact|b_2x|b_select"
    done
    timeout 100 ncu --kernel-name regex:SelectKernel --launch-skip 7 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats \
      --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,smsp__inst_executed.sum,smsp__cycles_active.avg \
      "$B/threshold_select_bench" --reps 2 --warmup 1 --repair-reps 0 > "$OUT/ncu.txt" 2>&1
    echo "ncu exit: $?"; grep -E "Duration|Registers Per|Achieved Occupancy|stalled|inst_executed|cycles_active|Throughput" "$OUT/ncu.txt" | awk '$NF+0 > 0.1 || /Duration|Regis|inst|cycles/' | head -30
    SIEVE_GPU_STAGES=1 timeout 100 "$B/gpu_paths_bench" --reps 10 >> "$OUT/bench.jsonl" 2> "$OUT/paths.txt"
    echo "gpu_paths_bench exit: $?"; cat "$OUT/paths.txt" | grep -v "^stages"; grep "^stages" "$OUT/paths.txt" | grep -E "dense n=10000000|gather n=100000 "
    for v in "$B"/*-gpu_paths_bench; do
      [ -x "$v" ] || continue
      n=$(basename "$v" -gpu_paths_bench)
      # The variant's own GPU tests of the paths it may change, before its timings count.
      if [ -x "$B/$n-gpu_tests" ]; then
        # (appended to ts_tests.log: the device tool returns at most eight files)
        echo "== variant $n gpu_tests" >> "$OUT/ts_tests.log"
        timeout 120 "$B/$n-gpu_tests" --gtest_filter='GpuExecutorTest.*:ThresholdSelectTest.*:CuvsPrefilteredShapes/*' > /tmp/variant-tests.log 2>&1
        echo "variant $n gpu_tests exit: $?"; cat /tmp/variant-tests.log >> "$OUT/ts_tests.log"
        grep -E "^\[  (PASSED|FAILED) " /tmp/variant-tests.log | head -8
      fi
      echo "== variant $(basename "$v")" >> "$OUT/paths.txt"
      SIEVE_GPU_STAGES=1 timeout 60 "$v" --reps 10 --paths gather,dense --fractions 0.01,1.0 --extra-rows '' >> "$OUT/bench.jsonl" 2>> "$OUT/paths.txt"
      echo "variant $(basename "$v") exit: $?"
      # The candidate scan's sample size (SIEVE_GPU_CAND_SAMPLE_X; ignored by builds without it).
      for x in 2 4; do
        echo "== variant $(basename "$v") SIEVE_GPU_CAND_SAMPLE_X=$x" >> "$OUT/paths.txt"
        SIEVE_GPU_CAND_SAMPLE_X=$x SIEVE_GPU_STAGES=1 timeout 40 "$v" --reps 10 --paths gather --fractions 0.01 --extra-rows '' >> "$OUT/bench.jsonl" 2>> "$OUT/paths.txt"
      done
    done
    for lv in 4 5 6; do
      echo "== SIEVE_GPU_TS_LEVELS=$lv SIEVE_GPU_THRESHOLD_GATHER=1" >> "$OUT/paths.txt"
      SIEVE_GPU_TS_LEVELS=$lv SIEVE_GPU_THRESHOLD_GATHER=1 SIEVE_GPU_DEBUG=1 SIEVE_GPU_STAGES=1 timeout 60 "$B/gpu_paths_bench" --reps 10 --paths gather,dense --fractions 0.01,0.1,1.0 --extra-rows '' >> "$OUT/bench.jsonl" 2>> "$OUT/paths.txt"
      echo "gather/dense (threshold select, <= $lv levels) exit: $?"
    done
    echo "== SIEVE_GPU_FUSED=1 (fused candidate kernel for the gather below 262,144 rows)" >> "$OUT/paths.txt"
    SIEVE_GPU_FUSED=1 SIEVE_GPU_STAGES=1 timeout 60 "$B/gpu_paths_bench" --reps 10 --paths gather --fractions 0.001,0.01 --extra-rows '' >> "$OUT/bench.jsonl" 2>> "$OUT/paths.txt"
    echo "gather (fused candidates) exit: $?"
    echo "== SIEVE_GPU_CAND_TILE_MB=64 (one candidate tile for 100k gathered rows)" >> "$OUT/paths.txt"
    SIEVE_GPU_CAND_TILE_MB=64 SIEVE_GPU_STAGES=1 timeout 60 "$B/gpu_paths_bench" --reps 10 --paths gather --fractions 0.01 --extra-rows '' >> "$OUT/bench.jsonl" 2>> "$OUT/paths.txt"
    echo "gather (64 MiB candidate tile) exit: $?"
    sed -n '/^== /,$p' "$OUT/paths.txt" | grep -E "^==|^stages (gather n=10000 |gather n=100000 |gather n=1000000 |dense n=10000000)|^[01]" | cut -c1-300
    # Every kernel of one gather at 1 % and one dense at 100 % (one warm-up, one timed run), with
    # its device time: where the milliseconds of each path go.
    for pf in gather:0.01 dense:1.0; do
      timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv \
        "$B/gpu_paths_bench" --reps 1 --warmup 1 --paths "${pf%%:*}" --fractions "${pf##*:}" --extra-rows '' \
        > "$OUT/kernels_${pf%%:*}.csv" 2> /dev/null
      echo "ncu kernels ${pf%%:*} exit: $?"
      python3 tools/bench/ncu_kernels.py "$OUT/kernels_${pf%%:*}.csv" | tee -a "$OUT/paths.txt" | tail -25
    done
    tar -czf "$OUT/kernels.tgz" -C "$OUT" kernels_gather.csv kernels_dense.csv && rm -f "$OUT"/kernels_*.csv
    timeout 100 compute-sanitizer --tool memcheck --error-exitcode 3 "$B/gpu_tests" \
      --gtest_filter='ThresholdSelectTest.*:PagePoolTest.*:GpuExecutorTest.ThresholdSelectGatherPath' \
      > "$OUT/sanitize.log" 2>&1
    echo "compute-sanitizer memcheck exit: $?"; tail -n 4 "$OUT/sanitize.log"
    ;;
  compare)
    # A hang or failure of this checkout's threshold select stops the round at once.
    timeout 60 "$B/gpu_tests" --gtest_filter='ThresholdSelectTest.SanitizerSmall:ThresholdSelectTest.NoRepair:ThresholdSelectTest.AllScoresEqual' > "$OUT/quick.log" 2>&1
    rc=$?; echo "quick check exit: $rc"; tail -n 3 "$OUT/quick.log"
    [ $rc -eq 0 ] || exit 1
    for t in "$B/gpu_tests" "$B"/*-gpu_tests; do
      [ -x "$t" ] || continue
      n=$(basename "$t" -gpu_tests)
      echo "== variant $n gpu_tests" >> "$OUT/tests.log"
      timeout 150 "$t" --gtest_filter='GpuExecutorTest.*:ThresholdSelect*:*ThresholdSelectSweep*:PagePoolTest.*' > /tmp/vt.log 2>&1
      echo "variant $n gpu_tests exit: $?"; cat /tmp/vt.log >> "$OUT/tests.log"
      grep -E "^\[  (PASSED|FAILED) |tests ran" /tmp/vt.log | head -12
    done
    # The threshold-select kernel alone (exact, 2x loose, sampled; no filter and a 10 % bitset).
    for v in "$B/threshold_select_bench" "$B"/*-threshold_select_bench; do
      [ -x "$v" ] || continue
      echo "== $(basename "$v")" >> "$OUT/ts_bench.txt"
      timeout 100 "$v" --reps 7 --repair-reps 0 >> "$OUT/bench.jsonl" 2>> "$OUT/ts_bench.txt"
      echo "$(basename "$v") exit: $?"
    done
    [ -s "$OUT/ts_bench.txt" ] && grep -E "^==|b_exact|b_2x|b_select|sample|kernel |checks|CHECKS" "$OUT/ts_bench.txt" | cut -c1-200
    for round in 1 2; do
      for v in "$B/gpu_paths_bench" "$B"/*-gpu_paths_bench; do
        [ -x "$v" ] || continue
        echo "== round $round $(basename "$v")" >> "$OUT/paths.txt"
        SIEVE_GPU_STAGES=1 timeout 60 "$v" --reps 10 --paths gather --fractions 0.001,0.01 --extra-rows '' >> "$OUT/bench.jsonl" 2>> "$OUT/paths.txt"
        echo "$(basename "$v") round $round gather exit: $?"
        SIEVE_GPU_STAGES=1 timeout 60 "$v" --reps 10 --paths dense --fractions 1.0 --extra-rows '' >> "$OUT/bench.jsonl" 2>> "$OUT/paths.txt"
        echo "$(basename "$v") round $round dense exit: $?"
      done
    done
    for lv in 3 5; do
      echo "== gpu_paths_bench SIEVE_GPU_TS_LEVELS=$lv" >> "$OUT/paths.txt"
      SIEVE_GPU_TS_LEVELS=$lv SIEVE_GPU_STAGES=1 timeout 40 "$B/gpu_paths_bench" --reps 10 --paths dense --fractions 1.0 --extra-rows '' >> "$OUT/bench.jsonl" 2>> "$OUT/paths.txt"
    done
    # Kernels of the gather at 1 %: this checkout and the variants under test (those whose
    # gpu_tests are bundled; the others are timing baselines).
    for v in "$B/gpu_paths_bench" "$B"/*-gpu_paths_bench; do
      [ -x "$v" ] || continue
      n=$(basename "$v" -gpu_paths_bench)
      [ "$n" = gpu_paths_bench ] || [ -x "$B/$n-gpu_tests" ] || continue
      timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum --csv \
        "$v" --reps 1 --warmup 1 --paths gather --fractions 0.01 --extra-rows '' > "$OUT/kernels_$n.csv" 2> /dev/null
      echo "ncu kernels $n exit: $?"
      python3 tools/bench/ncu_kernels.py "$OUT/kernels_$n.csv" | tee -a "$OUT/paths.txt" | sed -n '/-- per kernel/,$p' | head -14
    done
    # Every kernel of this checkout's dense search at 100 % (one warm-up, one timed run).
    timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --csv \
      "$B/gpu_paths_bench" --reps 1 --warmup 1 --paths dense --fractions 1.0 --extra-rows '' > "$OUT/kernels_dense.csv" 2> /dev/null
    echo "ncu kernels dense exit: $?"
    python3 tools/bench/ncu_kernels.py "$OUT/kernels_dense.csv" | tee -a "$OUT/paths.txt" | awk '$1 >= 77' | head -30
    grep -E "^==|^stages (gather n=100000 |dense n=10000000)|^[01]" "$OUT/paths.txt" | cut -c1-260
    ls "$OUT"/kernels_*.csv > /dev/null 2>&1 && tar -czf "$OUT/kernels.tgz" -C "$OUT" $(cd "$OUT" && ls kernels_*.csv) && rm -f "$OUT"/kernels_*.csv
    # racecheck + synccheck over SanitizerSmall (this checkout's threshold select).
    for t in "$B/gpu_tests"; do
      for tool in racecheck synccheck; do
        timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 "$t" \
          --gtest_filter='ThresholdSelectTest.SanitizerSmall' > /tmp/san.log 2>&1
        echo "$(basename "$t") compute-sanitizer $tool exit: $?" | tee -a "$OUT/sanitize.log"; tail -n 3 /tmp/san.log | tee -a "$OUT/sanitize.log"
      done
    done
    ;;
  kernel)
    # A threshold-select kernel change against a baseline build, in one call (eight files at
    # most come back):
    #  1. a quick check of each kernel; a failure of the mma.sync one stops the call, one of the
    #     wgmma one skips its timings;
    #  2. every gpu_tests test with the CLI contract tests on --device gpu beside it (FinalTests),
    #     then the threshold-select and engine threshold tests with SIEVE_GPU_WGMMA=1;
    #  3. the kernel bench: this build with each kernel and every bundled
    #     NAME-threshold_select_bench (the baselines), alternately, twice;
    #  4. dense at 100 % with each kernel;
    #  5. ncu, the full set of sections, of one launch of the kernel bench's exact case (launch
    #     12) with each kernel.
    timeout 60 "$B/gpu_tests" --gtest_filter='ThresholdSelectTest.SanitizerSmall:ThresholdSelectTest.NoRepair:ThresholdSelectTest.AllScoresEqual' > /tmp/q.log 2>&1
    rc=$?; echo "quick check (mma) exit: $rc"; tail -n 3 /tmp/q.log
    [ $rc -eq 0 ] || { cp /tmp/q.log "$OUT/quick.log"; exit 1; }
    SIEVE_GPU_WGMMA=1 timeout 60 "$B/gpu_tests" --gtest_filter='ThresholdSelectTest.SanitizerSmall:ThresholdSelectTest.NoRepair:ThresholdSelectTest.AllScoresEqual' > /tmp/q.log 2>&1
    wg=$?; echo "quick check (wgmma) exit: $wg"; tail -n 3 /tmp/q.log
    FinalTests
    if [ $wg -eq 0 ]; then
      SIEVE_GPU_WGMMA=1 timeout 120 "$B/gpu_tests" --gtest_filter='ThresholdSelectTest.*:GpuExecutorTest.*Threshold*' > "$OUT/tests_wgmma.log" 2>&1
      wg=$?; echo "tests (wgmma) exit: $wg"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/tests_wgmma.log" | head -12
      gzip -f "$OUT/tests_wgmma.log"
    fi
    kinds="0"; [ $wg -eq 0 ] && kinds="0 1"
    for round in 1 2; do
      KernelBenches "round $round " $kinds
      VariantBenches "$round"
    done
    grep -E "^==|b_exact|b_2x|b_select|checks|CHECKS" "$OUT/ts_bench.txt" | cut -c1-200
    for w in $kinds; do
      echo "== dense SIEVE_GPU_WGMMA=$w" >> "$OUT/paths.txt"
      SIEVE_GPU_WGMMA=$w SIEVE_GPU_STAGES=1 timeout 60 "$B/gpu_paths_bench" --reps 10 --paths dense --fractions 1.0 --extra-rows '' > /dev/null 2>> "$OUT/paths.txt"
    done
    grep -E "^==|^stages dense n=10000000|^1 " "$OUT/paths.txt" | cut -c1-260
    NcuExact ncu $kinds
    ;;
  variants)
    # Kernel variants alone (bench binaries NAME-threshold_select_bench made by
    # build_kernel_variant.sh or build_variant.sh; the bench checks every result against the
    # host brute force and between its cases): each one's kernel bench, alternately, twice; then
    # ncu of one launch of the exact case of the variant named by $PROFILE, with its per-SASS
    # source page (stall samples and shared-memory wavefronts an instruction) as CSV.
    for round in 1 2; do
      VariantBenches "$round"
    done
    grep -E "^==|b_exact|b_2x|b_select|checks|CHECKS" "$OUT/ts_bench.txt" | cut -c1-200
    if [ -n "${PROFILE:-}" ]; then
      timeout 150 ncu --kernel-name regex:SelectKernel --launch-skip 12 --launch-count 1 \
        --section SourceCounters --section WarpStateStats --section SpeedOfLight --section MemoryWorkloadAnalysis \
        --import-source no -o /tmp/prof "$B/$PROFILE-threshold_select_bench" --reps 1 --warmup 1 --repair-reps 0 > "$OUT/ncu_$PROFILE.txt" 2>&1
      echo "ncu exit: $?"
      timeout 100 ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > "$OUT/src_$PROFILE.csv" 2>&1
      echo "ncu source page exit: $?"; head -c 600 "$OUT/src_$PROFILE.csv"; echo
      timeout 60 ncu -i /tmp/prof.ncu-rep --page details >> "$OUT/ncu_$PROFILE.txt" 2>&1
      grep -E "Duration|Throughput|Warp Cycles|stalled|Eligible|excessive" "$OUT/ncu_$PROFILE.txt" | head -30
      gzip -f "$OUT/src_$PROFILE.csv" "$OUT/ncu_$PROFILE.txt"
    fi
    ;;
  gather)
    # A short check of an engine change to the gather path: this checkout's executor tests, then
    # gather at 1 % for this checkout and every variant alternately, three times each.
    timeout 120 "$B/gpu_tests" --gtest_filter='GpuExecutorTest.*' > "$OUT/tests.log" 2>&1
    rc=$?; echo "executor tests exit: $rc"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/tests.log" | head -8
    [ $rc -eq 0 ] || exit 1
    for round in 1 2 3; do
      for v in "$B/gpu_paths_bench" "$B"/*-gpu_paths_bench; do
        [ -x "$v" ] || continue
        echo "== round $round $(basename "$v")" >> "$OUT/paths.txt"
        SIEVE_GPU_STAGES=1 timeout 30 "$v" --reps 10 --paths gather --fractions 0.01 --extra-rows '' >> "$OUT/bench.jsonl" 2>> "$OUT/paths.txt"
      done
    done
    grep -E "^==|^stages gather n=100000 |^0.01" "$OUT/paths.txt" | cut -c1-200
    ;;
  finalts)
    # final for a threshold-select change, in one call: every gpu_tests test with the CLI
    # contract tests on the GPU beside it, the threshold-select and engine threshold tests with
    # SIEVE_GPU_WGMMA=1, the kernel bench with each kernel (and of bundled variants), the path
    # bench, the dense path without the threshold select, PyTorch, and racecheck and synccheck
    # over ThresholdSelectTest.SanitizerSmall; the kernel bench, the wgmma tests and the
    # sanitizers come back in checks.tgz (the device tool returns eight files). A failure of
    # the quick check stops the call at once.
    timeout 60 "$B/gpu_tests" --gtest_filter='ThresholdSelectTest.SanitizerSmall:ThresholdSelectTest.NoRepair:ThresholdSelectTest.AllScoresEqual:PagePool*' > /tmp/q.log 2>&1
    rc=$?; echo "quick check exit: $rc"; tail -n 3 /tmp/q.log
    [ $rc -eq 0 ] || { cp /tmp/q.log "$OUT/quick.log"; grep -B2 -A12 "Failure" /tmp/q.log | head -60; exit 1; }
    FinalTests
    SIEVE_GPU_WGMMA=1 timeout 60 "$B/gpu_tests" --gtest_filter='ThresholdSelectTest.*:GpuExecutorTest.*Threshold*' > "$OUT/tests_wgmma.log" 2>&1
    echo "tests (wgmma) exit: $?"; grep -E "^\[  (PASSED|FAILED) |tests ran" "$OUT/tests_wgmma.log" | head -12
    gzip -f "$OUT/tests_wgmma.log"
    KernelBenches "round 1 " 0 1
    # This build's kernel copying pages with cp.async (no effect where it has no TMA copies).
    SIEVE_GPU_TMA=0 KernelBenches "round 1 SIEVE_GPU_TMA=0 " 0
    # Kernel variants bundled beside (NAME-threshold_select_bench, build_kernel_variant.sh), timed
    # alternately with this build's kernel, twice (none bundled: nothing more).
    if ls "$B"/*-threshold_select_bench > /dev/null 2>&1; then
      VariantBenches 1
      KernelBenches "round 2 " 0
      VariantBenches 2
    fi
    grep -E "^==|b_exact|b_2x|b_select|checks|CHECKS" "$OUT/ts_bench.txt" | cut -c1-200
    FinalPaths
    # The dense path without the threshold select, same call: the GEMM and candidate scan
    # (SIEVE_GPU_THRESHOLD=0), and the GEMM and select_k over every column (with
    # SIEVE_GPU_NO_CANDIDATES=1).
    for nc in 0 1; do
      echo "== dense SIEVE_GPU_THRESHOLD=0 SIEVE_GPU_NO_CANDIDATES=$nc" >> "$OUT/gpu_paths_bench.txt"
      SIEVE_GPU_THRESHOLD=0 SIEVE_GPU_NO_CANDIDATES=$nc SIEVE_GPU_STAGES=1 timeout 60 "$B/gpu_paths_bench" --reps 10 --paths dense --fractions 1.0 --extra-rows '' >> "$OUT/gpu_paths_bench.jsonl" 2>> "$OUT/gpu_paths_bench.txt"
      echo "dense without the threshold select (no candidates=$nc) exit: $?"
    done
    sed -n '/^== dense SIEVE_GPU_THRESHOLD=0/,$p' "$OUT/gpu_paths_bench.txt" | grep -E "^==|^1 |^stages dense"
    timeout 60 python3 tools/bench/torch_paths.py 2>&1 | tee "$OUT/torch_paths.txt"
    for tool in racecheck synccheck; do
      timeout 80 compute-sanitizer --tool $tool --error-exitcode 3 "$B/gpu_tests" \
        --gtest_filter='ThresholdSelectTest.SanitizerSmall' > /tmp/san.log 2>&1
      echo "compute-sanitizer $tool exit: $?" | tee -a "$OUT/sanitize.log"; tail -n 4 /tmp/san.log | tee -a "$OUT/sanitize.log"
    done
    # Eight files at most come back: the kernel bench, the wgmma tests and the sanitizers in one.
    tar -czf "$OUT/checks.tgz" -C "$OUT" ts_bench.txt tests_wgmma.log.gz sanitize.log &&
      rm -f "$OUT/ts_bench.txt" "$OUT/tests_wgmma.log.gz" "$OUT/sanitize.log"
    ;;
  final)
    FinalTests
    FinalPaths
    timeout 60 python3 tools/bench/torch_paths.py 2>&1 | tee "$OUT/torch_paths.txt"
    ;;
  sanitize)
    # memcheck over the threshold-select tests and the gathered path; racecheck and synccheck
    # (which instrument every shared-memory access and barrier) over one small case with repair
    # by the last CTA (SanitizerSmall): racecheck did not finish AllScoresEqual in 170 s
    # (2026-11-30, results/2026-11-30-h200-session4/racecheck.log).
    timeout 170 compute-sanitizer --tool memcheck --error-exitcode 3 "$B/gpu_tests" \
      --gtest_filter='ThresholdSelectTest.*:PagePoolTest.*:GpuExecutorTest.ThresholdSelectGatherPath' \
      > "$OUT/sanitize_memcheck.log" 2>&1
    echo "compute-sanitizer memcheck exit: $?"; tail -n 4 "$OUT/sanitize_memcheck.log"
    for tool in racecheck synccheck; do
      timeout 200 compute-sanitizer --tool $tool --error-exitcode 3 "$B/gpu_tests" \
        --gtest_filter='ThresholdSelectTest.SanitizerSmall' > "$OUT/sanitize_$tool.log" 2>&1
      echo "compute-sanitizer $tool exit: $?"; tail -n 4 "$OUT/sanitize_$tool.log"
    done
    ;;
esac
