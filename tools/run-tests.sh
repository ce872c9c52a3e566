#!/usr/bin/env bash
# The README's test command: installs dependencies, builds everything (the Python module too)
# and runs every test: the C++ suites (ctest; GPU tests skip themselves without a device), the
# Python package's suite (pytest, against the module of this build), the server against its
# OpenAPI document under the API fuzzer schemathesis (tools/run-schemathesis.sh), the install
# check (the build installed into a temporary prefix and tools/example built against it with
# find_package(sieve), tools/check-install.sh) and the wheel check (a `pip wheel .` installed
# into a fresh virtual environment, tools/check-wheel.sh); then the CPU suite once more under
# ASan + UBSan (tools/run-sanitized.sh, a clang tree in build-asan/) and each libFuzzer target
# for a bounded time in that tree (tools/run-fuzz.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/install-deps.sh"
py=$(bash "$root/tools/python-env.sh")
# ccache keys on paths relative to the checkout, so the wheel's build reuses these objects.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
bash "$root/tools/build.sh" -DSIEVE_PYTHON=ON -DPython_EXECUTABLE="$py"
cd "$root/build"
ctest --output-on-failure -j "${SIEVE_JOBS:-$(nproc)}" --timeout 900
bash "$root/tools/check-install.sh" "$root/build"
# pytest exits non-zero on a failure and with 5 when it collected no test: both fail this script.
cd "$root"
PYTHONPATH="$root/build/python" SIEVE_CLI="$root/build/tools/sieve" \
  "$py" -m pytest -p no:cacheprovider -q -rs "$root/python/tests"
bash "$root/tools/run-schemathesis.sh" "$root/build/tools/sieve"
bash "$root/tools/check-wheel.sh"
bash "$root/tools/run-sanitized.sh"
bash "$root/tools/run-fuzz.sh"
