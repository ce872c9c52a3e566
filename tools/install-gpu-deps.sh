#!/usr/bin/env bash
# Installs what the CUDA backend (gpu/) needs beyond the CUDA toolkit, into a project-local,
# git-ignored prefix (default: <repo>/.deps; override with SIEVE_DEPS_PREFIX):
#   libraft-cu13   RAFT headers (select_k, bitset), used header-only
#   librmm-cu13    RMM (librmm.so) and the CCCL headers RAFT was built with (include/rapids)
#   rapids-logger  librapids_logger.so, which RMM links
# The project configures with the system CMake 3.25 and wires the wheels by hand (see
# gpu/CMakeLists.txt), so RAFT's CMake >= 4 package config is not needed.
# Wheels are installed with `pip --no-deps --target`: nothing is installed system-wide and the
# CUDA libraries come from the machine's toolkit, not from nvidia-* wheels.
# Versions follow shared/research/raft-build-notes.md (RAFT/RMM 26.08, rapids-logger 0.2.3, CCCL
# 3.4.3 inside the librmm wheel). Idempotent: a stamp file records what is installed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
prefix=${SIEVE_DEPS_PREFIX:-$repo/.deps}
site=$prefix/site-packages
python=${PYTHON:-python3}

wheels=(
  "libraft-cu13==26.8.0"
  "librmm-cu13==26.8.0"
  "rapids-logger==0.2.3"
)
stamp=$prefix/.installed
want=$(printf '%s\n' "${wheels[@]}")

find_config() {  # name of a <name>-config.cmake → its path, or empty
  find "$site" -name "$1-config.cmake" -print -quit 2>/dev/null || true
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -n "$(find_config raft)" ] \
    && [ -n "$(find_config rmm)" ] && [ -n "$(find_config rapids_logger)" ]; then
  echo "install-gpu-deps: already installed in $prefix" >&2
else
  echo "install-gpu-deps: installing ${wheels[*]} into $site" >&2
  rm -rf "$site" "$stamp"
  mkdir -p "$site"
  "$python" -m pip install --quiet --no-deps --no-compile --target "$site" "${wheels[@]}"
  printf '%s\n' "$want" >"$stamp"
fi


# Sanity checks the build relies on: the CCCL headers inside the librmm wheel, RMM's and
# rapids-logger's shared libraries, and RAFT's select_k header.
missing=0
for f in "librmm/include/rapids/cuda/std/version" "librmm/include/rmm/version_config.hpp" \
         "libraft/include/raft/matrix/select_k.cuh" "librmm/lib64/librmm.so" \
         "rapids_logger/lib64/librapids_logger.so"; do
  if [ ! -e "$site/$f" ]; then
    echo "install-gpu-deps: missing $site/$f" >&2
    missing=1
  fi
done

echo "prefix:               $prefix"
echo "raft-config:          $(find_config raft)"
echo "rmm-config:           $(find_config rmm)"
echo "rapids_logger-config: $(find_config rapids_logger)"
echo "cccl-config:          $(find_config cccl)"
exit $missing
