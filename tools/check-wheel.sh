#!/usr/bin/env bash
# The Python package as a user installs it: `pip wheel .` from the repository root, the wheel
# installed into a fresh virtual environment of Debian's python3, its extension's shared
# libraries checked with ldd (every one outside glibc, libstdc++/libgcc and the CUDA toolkit
# must come from the wheel itself), then the package's embedded tests run against the installed
# copy from outside the source tree. Run by tools/run-tests.sh after the build.
#
# The wheel is built without pip's build isolation, by the test environment's scikit-build-core
# and nanobind (tools/python-env.sh), with build/'s compilers: its compile commands are then
# build/'s, and ccache (CCACHE_BASEDIR) serves the engine's objects instead of compiling them a
# second time. `pip install .` / `pip wheel .` as the README shows them use build isolation.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-/usr/bin/python3}
out="$root/build/wheel-check"
rm -rf "$out/dist" "$out/venv" "$root/build-wheel/CMakeCache.txt"
mkdir -p "$out"
# Compiler cache entries hold paths relative to the checkout, so the wheel's build (another
# build folder) reuses the objects of build/.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
builder=$(bash "$root/tools/python-env.sh")
compiler() { sed -n "s/^CMAKE_$1_COMPILER:[A-Z]*=//p" "$root/build/CMakeCache.txt" 2>/dev/null; }
if [ -n "$(compiler C)" ]; then export CC; CC=$(compiler C); fi
if [ -n "$(compiler CXX)" ]; then export CXX; CXX=$(compiler CXX); fi
if [ -n "$(compiler CUDA)" ]; then export CUDACXX; CUDACXX=$(compiler CUDA); fi
t0=$(date +%s)
"$builder" -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation \
  -w "$out/dist" "$root"
wheel=$(ls "$out"/dist/sieve_db-*.whl)
echo "check-wheel: built $(basename "$wheel") ($(du -h "$wheel" | cut -f1)) in $(($(date +%s) - t0)) s" >&2
"$python" -m venv "$out/venv"
"$out/venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel" pytest
pkg=$(cd /tmp && "$out/venv/bin/python" -c 'import os, sieve; print(os.path.dirname(sieve.__file__))')
case "$pkg" in
  "$out/venv/"*) ;;
  *) echo "check-wheel: sieve imported from $pkg, not the fresh environment" >&2; exit 1 ;;
esac
ext=$(ls "$pkg"/_sieve*.so)
system='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread\.so|libresolv\.so|libstdc\+\+|libgcc_s|libcuda\.so|libcudart|libcublas|libcublasLt|libcusparse|libcurand|libcusolver|libcufft|libnvJitLink|libnvrtc|libnccl)'
bad=0
while read -r name arrow path _; do
  [ "$arrow" = "=>" ] || continue
  if [ "$path" = "not" ]; then
    echo "check-wheel: $name not found" >&2; bad=1
  elif ! [[ "$name" =~ $system ]] && [[ "$path" != "$pkg/"* ]]; then
    echo "check-wheel: $name comes from $path, not from the wheel" >&2; bad=1
  fi
done < <(ldd "$ext")
[ $bad -eq 0 ] || { ldd "$ext" >&2; exit 1; }
echo "check-wheel: ldd: every non-system library of $(basename "$ext") is in the wheel:" \
  "$(cd "$pkg" && ls *.so* | grep -v _sieve | tr '\n' ' ')" >&2
# The installed package, not the source tree: pytest runs from a copy of the tests.
rm -rf "$out/tests" && cp -r "$root/python/tests" "$out/tests"
cd "$out/tests"
SIEVE_CLI="$root/build/tools/sieve" "$out/venv/bin/python" -m pytest -q -p no:cacheprovider \
  test_search.py test_errors.py test_zero_copy.py
