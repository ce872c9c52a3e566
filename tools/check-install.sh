#!/usr/bin/env bash
# Proves that Sieve installs as a CMake package an application can use: installs the build
# (default build/) into a temporary prefix with `cmake --install`, checks the installed layout,
# builds tools/example as a project of its own against it (find_package(sieve), C++17, nothing
# from the source tree on its include path) and runs it, which checks its filtered search.
# Then the same program in a parent project that takes Sieve with add_subdirectory (CPU
# backend only: it checks the CMake wiring, not CUDA; SIEVE_CHECK_SUBPROJECT=0 skips it).
# Usage: tools/check-install.sh [BUILD_DIR]   (run by tools/run-tests.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sieve-check-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || {
  cat "$tmp/install.log" >&2
  echo "check-install: cmake --install failed" >&2
  exit 1
}
for f in include/sieve/db.h include/sieve/status.h include/sieve/types.h \
         include/sieve/gpu_options.h include/sieve/version.h include/sieve/text.h \
         lib/libsieve.a \
         lib/cmake/sieve/sieveConfig.cmake lib/cmake/sieve/sieveConfigVersion.cmake \
         lib/cmake/sieve/sieveTargets.cmake; do
  [ -e "$prefix/$f" ] || { echo "check-install: $f is not installed" >&2; exit 1; }
done
# The public headers include only the standard library and each other.
if grep -hE '^#include' "$prefix"/include/sieve/*.h | grep -vE '^#include (<[a-z_]+>|"sieve/[a-z_]+\.h")$'; then
  echo "check-install: an installed header includes something outside sieve/ and the std lib" >&2
  exit 1
fi

# Configured from a copy, so that no path of the source tree can leak in.
cp -r "$root/tools/example" "$tmp/example-src"
cmake -S "$tmp/example-src" -B "$tmp/example-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_STANDARD=17 -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/configure.log" 2>&1 || {
  cat "$tmp/configure.log" >&2
  echo "check-install: configuring tools/example against the installed Sieve failed" >&2
  exit 1
}
grep -q "sieve 0.1.0 from $prefix/lib/cmake/sieve" "$tmp/configure.log" || {
  cat "$tmp/configure.log" >&2
  echo "check-install: tools/example did not find the Sieve installed in $prefix" >&2
  exit 1
}
cmake --build "$tmp/example-build" >"$tmp/build.log" 2>&1 || {
  cat "$tmp/build.log" >&2
  echo "check-install: building tools/example against the installed Sieve failed" >&2
  exit 1
}
if grep -q -- "-I$root\|-isystem $root" "$tmp/example-build/compile_commands.json" 2>/dev/null; then
  echo "check-install: tools/example was compiled with the source tree on its include path" >&2
  exit 1
fi
"$tmp/example-build/embed_example" "$tmp/db" >"$tmp/run.log" 2>&1 || {
  cat "$tmp/run.log" >&2
  echo "check-install: tools/example built against the installed Sieve failed" >&2
  exit 1
}
grep -q "^sieve 0.1.0$" "$tmp/run.log" || { cat "$tmp/run.log" >&2; exit 1; }
echo "check-install: installed into a temporary prefix; tools/example built with find_package(sieve) and ran" >&2

[ "${SIEVE_CHECK_SUBPROJECT:-1}" = 0 ] && exit 0
mkdir -p "$tmp/parent"
cat >"$tmp/parent/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(parent LANGUAGES C CXX)
add_subdirectory("$root" sieve)
add_executable(app "$root/tools/example/embed_example.cc")
target_link_libraries(app PRIVATE sieve::sieve)
CMAKE
cmake -S "$tmp/parent" -B "$tmp/parent-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSIEVE_CUDA=OFF >"$tmp/parent-configure.log" 2>&1 || {
  cat "$tmp/parent-configure.log" >&2
  echo "check-install: a project that adds Sieve with add_subdirectory does not configure" >&2
  exit 1
}
cmake --build "$tmp/parent-build" --target app -j "${SIEVE_JOBS:-$(nproc)}" \
  >"$tmp/parent-build.log" 2>&1 || {
  tail -50 "$tmp/parent-build.log" >&2
  echo "check-install: a project that adds Sieve with add_subdirectory does not build" >&2
  exit 1
}
"$tmp/parent-build/app" "$tmp/db2" >"$tmp/parent-run.log" 2>&1 || {
  cat "$tmp/parent-run.log" >&2
  echo "check-install: tools/example built through add_subdirectory failed" >&2
  exit 1
}
echo "check-install: tools/example built through add_subdirectory(sieve) and ran" >&2
