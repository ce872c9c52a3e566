#!/usr/bin/env bash
# Installs Apache Arrow's C++ libraries that the CLI's Parquet reader and writer use
# (tools/io/parquet_*.cc: `sieve ingest --vectors FILE.parquet:COLUMN`, `sieve export --format
# parquet`) into a project-local, git-ignored prefix (default: <repo>/.deps/arrow; override
# with SIEVE_ARROW_PREFIX):
#   include/arrow, include/parquet    the headers
#   lib/libarrow.so.2100, lib/libparquet.so.2100
# Debian 12 packages no Arrow, and Apache's own apt repository would add a signing key and a
# source list to the machine; the PyPI wheel `pyarrow` carries exactly these libraries (built
# with the C++11 ABI of Debian's GCC, needing only glibc, libstdc++ and libgcc) and their
# headers, and it is the very Arrow the Python package's tests write their files with. So the
# wheel is installed with `pip --no-deps --target` into a scratch folder, and only the two
# libraries and their headers are kept (about 60 MB of the wheel's 140). The sieve binary finds
# them through its RPATH (CMake writes the folder into it). Version: the one of
# python/requirements-test.txt. Idempotent: a stamp file records what is installed.
# Exits 1 when the wheel cannot be installed; the build then leaves Parquet out and says so.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
prefix=${SIEVE_ARROW_PREFIX:-$repo/.deps/arrow}
python=${PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=python3
version=$(sed -n 's/^pyarrow==\([0-9.]*\)$/\1/p' "$repo/python/requirements-test.txt")
if [ -z "$version" ]; then
  echo "install-arrow: no pyarrow== line in python/requirements-test.txt" >&2
  exit 1
fi
want="pyarrow==$version"
stamp=$prefix/.installed

have() {
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
    [ -e "$prefix/include/arrow/api.h" ] && [ -e "$prefix/include/parquet/arrow/reader.h" ] &&
    ls "$prefix"/lib/libarrow.so.* >/dev/null 2>&1 &&
    ls "$prefix"/lib/libparquet.so.* >/dev/null 2>&1
}

if have; then
  echo "install-arrow: $want already installed in $prefix" >&2
  exit 0
fi

echo "install-arrow: installing the C++ libraries of $want into $prefix" >&2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/sieve-arrow.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# Debian's python3 may have no pip module (python3-pip is not installed by install-deps.sh);
# a virtual environment always has one (python3-venv).
if "$python" -m pip --version >/dev/null 2>&1; then
  pip=("$python" -m pip)
else
  "$python" -m venv "$scratch/venv"
  pip=("$scratch/venv/bin/python" -m pip)
fi
"${pip[@]}" install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
  --no-compile --target "$scratch/site" "$want"
src=$scratch/site/pyarrow
arrow_lib=$(cd "$src" && ls libarrow.so.[0-9]* | head -1)
parquet_lib=$(cd "$src" && ls libparquet.so.[0-9]* | head -1)
if [ -z "$arrow_lib" ] || [ -z "$parquet_lib" ] ||
   [ ! -e "$src/include/parquet/arrow/reader.h" ]; then
  echo "install-arrow: the $want wheel has no libarrow/libparquet or no headers" >&2
  exit 1
fi
rm -rf "$prefix"
mkdir -p "$prefix/lib" "$prefix/include"
cp "$src/$arrow_lib" "$src/$parquet_lib" "$prefix/lib/"
cp -r "$src/include/arrow" "$src/include/parquet" "$prefix/include/"
printf '%s\n' "$want" >"$stamp"
echo "install-arrow: $prefix/lib: $arrow_lib $parquet_lib" >&2
