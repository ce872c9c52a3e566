#!/usr/bin/env bash
# The whole CPU test suite once under AddressSanitizer + UndefinedBehaviorSanitizer: builds a
# CPU-only tree with clang (build-asan/, -DSIEVE_SANITIZE=address,undefined; the libFuzzer
# targets of tests/fuzz/ too, for tools/run-fuzz.sh) and runs ctest there. Any sanitizer
# report aborts its process, so the test fails. Tests that cannot run under ASan carry the
# CTest label no_asan (each says why where it is defined) and are left out.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-asan"
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DSIEVE_CUDA=OFF -DSIEVE_PYTHON=OFF -DSIEVE_SANITIZE=address,undefined -DSIEVE_FUZZ=ON >/dev/null
cmake --build "$build" -j "${SIEVE_JOBS:-$(nproc)}"
# detect_leaks: every test process must free what it allocates. Debian's RocksDB is not
# instrumented (a shared library), which ASan allows.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$build"
ctest --output-on-failure -j "${SIEVE_JOBS:-$(nproc)}" --timeout 1800 -LE no_asan
