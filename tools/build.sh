#!/usr/bin/env bash
# Installs the dependencies and builds Sieve into build/ (Release). Used by the README's two
# commands and by CI. Extra arguments go to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/tools/install-deps.sh"
# The CUDA backend is built whenever nvcc is present (it needs the RAFT/RMM wheels).
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if command -v nvcc >/dev/null 2>&1; then
  # Without the wheels the build still succeeds, leaving the GPU backend out (it says so).
  bash "$root/tools/install-gpu-deps.sh" ||
    echo "build: the RAFT/RMM wheels could not be installed; building without the GPU backend" >&2
fi
# Parquet in the CLI needs Arrow's C++ libraries (tools/install-arrow.sh, from the pyarrow
# wheel); without them the build still succeeds, leaving Parquet out (it says so).
bash "$root/tools/install-arrow.sh" ||
  echo "build: Arrow's libraries could not be installed; building without Parquet support" >&2
jobs=${SIEVE_JOBS:-$(nproc)}
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$root/build" -j "$jobs"
