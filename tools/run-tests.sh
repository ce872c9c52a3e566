#!/usr/bin/env bash
# The README's test command: installs dependencies, builds everything and runs every test
# (GPU tests skip themselves without a device).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/build.sh"
cd "$root/build"
ctest --output-on-failure -j "${SIEVE_JOBS:-$(nproc)}" --timeout 900
