#!/usr/bin/env bash
# Builds cuvs_peer_bench against the cuVS 26.10 stack that tools/install-cuvs-peer.sh unpacked
# (default <repo>/.deps/cuvs; override with SIEVE_CUVS_PREFIX), and packs what the H200 needs:
#   <prefix>/pack/cuvs_peer.tar.xz = bin/cuvs_peer_bench + lib/{libcuvs.so (pruned to sm_90a),
#   librmm.so 26.10, librapids_logger.so 0.3, libkvikio.so, libgomp-*.so, libzstd-*.so}
# The peer uses RMM 26.10 (libcuvs 26.10 is built against it), so its libraries live apart from
# Sieve's .bundle/lib (RMM 26.08, same soname librmm.so): the binary's RPATH is $ORIGIN/../lib.
# CUDA's own libraries (cuBLAS, cuSPARSE, cuSOLVER, cuRAND, NVRTC, nvJitLink, NCCL) are the
# device image's; tools/bench/peers/cuvs_peer/run.sh finds them there.
# Usage: tools/bench/peers/cuvs_peer/build.sh [--no-pack]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
prefix=${SIEVE_CUVS_PREFIX:-$repo/.deps/cuvs}
site=$prefix/site-packages
build=$prefix/build
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -e "$site/libcuvs/include/cuvs/neighbors/brute_force.hpp" ] && [ -e "$prefix/lib/libcuvs.so" ] || {
  echo "cuvs_peer/build.sh: run tools/install-cuvs-peer.sh first" >&2; exit 1; }
mkdir -p "$build/bin" "$build/lib"

# The CCCL 3.5 headers of the librmm 26.10 wheel come first (ahead of nvcc's own CCCL 3.0):
# libcuvs.so's mangled names carry its CCCL's ABI namespace (cuda::std::__4).
echo "cuvs_peer/build.sh: compiling (about a minute)" >&2
"$nvcc" -std=c++20 -O2 -gencode arch=compute_90a,code=sm_90a \
  --expt-extended-lambda --expt-relaxed-constexpr -Xcompiler -pthread \
  -I "$repo" -isystem "$site/librmm/include/rapids" \
  -isystem "$site/libcuvs/include" -isystem "$site/libraft/include" \
  -isystem "$site/librmm/include" -isystem "$site/rapids_logger/include" \
  -DCUB_DISABLE_NAMESPACE_MAGIC -DCUB_IGNORE_NAMESPACE_MAGIC_ERROR \
  -DTHRUST_DISABLE_ABI_NAMESPACE -DTHRUST_IGNORE_ABI_NAMESPACE_ERROR -DCCCL_DISABLE_PDL \
  -DRAFT_SYSTEM_LITTLE_ENDIAN=1 -DRAFT_LOG_ACTIVE_LEVEL=RAPIDS_LOGGER_LOG_LEVEL_INFO \
  "$here/cuvs_peer_bench.cu" -o "$build/bin/cuvs_peer_bench" \
  -L"$prefix/lib" -lcuvs -lrmm -lrapids_logger \
  -Xlinker --allow-shlib-undefined -Xlinker -rpath -Xlinker '$ORIGIN/../lib' \
  -lcudart -ldl
strip "$build/bin/cuvs_peer_bench"
cp -L "$prefix"/lib/*.so* "$build/lib/"
du -b "$build/bin/cuvs_peer_bench" | awk '{printf "cuvs_peer_bench: %.1f MB\n", $1 / 1e6}'

[ "${1:-}" = "--no-pack" ] && exit 0
mkdir -p "$prefix/pack"
echo "cuvs_peer/build.sh: packing (xz -9, about a minute)" >&2
tar -C "$build" -cf - bin lib | xz -T0 -9 > "$prefix/pack/cuvs_peer.tar.xz"
du -b "$prefix/pack/cuvs_peer.tar.xz" | awk '{printf ".deps/cuvs/pack/cuvs_peer.tar.xz: %.1f MB (%.1f MiB)\n", $1 / 1e6, $1 / 1048576}'
