#!/usr/bin/env bash
# Runs each libFuzzer target of tests/fuzz/ for a bounded time (SIEVE_FUZZ_SECONDS, default
# 45) from its committed seed corpus, nproc targets at a time, in the sanitized tree that
# tools/run-sanitized.sh builds (built here when missing). Fails when any target finds a crash,
# a sanitizer report, a leak, a timeout or a broken invariant; the input that did it is kept in
# build-asan/fuzz/<target>/ with the target's log, and is reproduced by
# `build-asan/tests/fuzz/<target> <input>`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-asan"
seconds=${SIEVE_FUZZ_SECONDS:-45}
jobs=${SIEVE_JOBS:-$(nproc)}
targets=(filter_fuzz npy_fuzz fvecs_fuzz attributes_fuzz router_fuzz)
if [ ! -f "$build/build.ninja" ]; then
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DSIEVE_CUDA=OFF -DSIEVE_PYTHON=OFF -DSIEVE_SANITIZE=address,undefined -DSIEVE_FUZZ=ON >/dev/null
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

run_one() {
  local t=$1 out="$build/fuzz/$1"
  rm -rf "$out" && mkdir -p "$out/corpus"
  # A working copy: what the run learns stays out of the source tree.
  cp "$root/tests/fuzz/corpus/$t/"* "$out/corpus/"
  if "$build/tests/fuzz/$t" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
      -max_len=4096 -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" \
      >"$out/log" 2>&1; then
    echo "run-fuzz: $t: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$out/log" |
      grep -o '[0-9]*$') inputs, no failure" >&2
  else
    echo "run-fuzz: $t FAILED (log and input in $out):" >&2
    tail -n 60 "$out/log" >&2
    return 1
  fi
}

failed=0
pids=()
names=()
for t in "${targets[@]}"; do
  run_one "$t" & pids+=($!) names+=("$t")
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}") names=("${names[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
exit $failed
