#!/usr/bin/env bash
# Installs the dependencies and builds Sieve into build/ (Release). Used by the README's two
# commands and by CI. Extra arguments go to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/install-deps.sh"
jobs=${SIEVE_JOBS:-$(nproc)}
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$root/build" -j "$jobs"
