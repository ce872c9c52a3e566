#!/usr/bin/env bash
# Installs cuVS 26.10 (the filtered brute-force kNN we compare against) into a project-local,
# git-ignored prefix (default: <repo>/.deps/cuvs; override with SIEVE_CUVS_PREFIX), and makes its
# libcuvs.so small enough to travel to the H200 (the device tool carries 64 MiB in all).
#
# Wheels (`pip download --no-deps`, then `pip install --no-deps --no-index --target`):
#   libcuvs-cu13 26.10.0   headers + libcuvs.so (291 MB: cubins for sm_75/80/86/90a/100/120/120a
#                          and compute_120 PTX). 26.10 holds the three-path dispatch (cuvs #2321)
#                          that Sieve competes with; 26.8.1 still has the old `sparsity < 0.9` rule.
#   librmm-cu13 26.10.0    librmm.so (libcuvs 26.10 is built against it; its ABI is not 26.08's)
#                          and the CCCL 3.5 headers libcuvs's mangled names need (cuda::std::__4)
#   libraft-cu13 26.10.0   RAFT headers (build only)
#   rapids-logger 0.3.0    librapids_logger.so (what RMM 26.10 and cuVS 26.10 link)
#   libkvikio-cu13 26.10.0 libkvikio.so, a NEEDED of libcuvs 26.10 (not of 26.8)
#   nvidia-cuda-cuobjdump 13.3.73  cuobjdump, to check and unpack the fatbinary (no nvprune on
#                          this machine's toolkit, in Debian main, or on PyPI)
# They sit apart from tools/install-gpu-deps.sh's RAFT/RMM 26.08 (<repo>/.deps/site-packages).
#
# Pruning (tools/bench/peers/cuvs_peer/prune_fatbin.py): keeps only the sm_90a cubin of each of the 425
# fatbins in libcuvs.so's .nv_fatbin, then stores each kept cubin uncompressed where it fits in
# the freed space (a solid xz of plain cubins is ~40 % smaller than nvcc's zstd-compressed ones).
# The library keeps its size and layout; the freed bytes are zeros that vanish under xz.
# Checked: cuobjdump lists 425 sm_90a cubins and nothing else, and every cubin unpacked from the
# pruned library is byte-identical to the original's sm_90a cubin.
#
# Result: <prefix>/lib holds the libraries cuvs_peer_bench needs beyond the CUDA toolkit's.
# Then: tools/bench/peers/cuvs_peer/build.sh (compile + pack). Pass --measure to print xz/zstd sizes.
# Idempotent: a stamp file records what is installed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
prefix=${SIEVE_CUVS_PREFIX:-$repo/.deps/cuvs}
site=$prefix/site-packages
python=${PYTHON:-python3}
measure=0
[ "${1:-}" = "--measure" ] && measure=1
# SIEVE_CUVS_INFLATE=0 keeps every cubin zstd-compressed (step 1 only; pack ~45 MB instead of 41).
inflate=${SIEVE_CUVS_INFLATE:-1}

wheels=(
  "libcuvs-cu13==26.10.0"
  "librmm-cu13==26.10.0"
  "libraft-cu13==26.10.0"
  "rapids-logger==0.3.0"
  "libkvikio-cu13==26.10.0"
  "nvidia-cuda-cuobjdump==13.3.73"
)
stamp=$prefix/.installed
want=$(printf '%s\n' "${wheels[@]}" "prune sm_90 inflate=$inflate")
mb() { du -b "$1" | awk '{printf "%.1f MB", $1 / 1e6}'; }

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -e "$prefix/lib/libcuvs.so" ]; then
  echo "install-cuvs-peer: already installed in $prefix" >&2
else
  mkdir -p "$prefix/wheels"
  echo "install-cuvs-peer: downloading ${wheels[*]} into $prefix/wheels (~270 MB)" >&2
  # Platform tags as the device README gives them: the wheels are py3-none-manylinux_2_2x.
  "$python" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$prefix/wheels" "${wheels[@]}"
  rm -rf "$site" "$prefix/lib" "$prefix/bin" "$stamp"
  files=()
  for w in "${wheels[@]}"; do
    name=${w%%==*}; ver=${w##*==}
    f=$(ls "$prefix/wheels/${name//-/_}-${ver}-"*.whl | head -1)
    files+=("$f")
  done
  "$python" -m pip install --quiet --no-deps --no-index --no-compile --target "$site" "${files[@]}"
  mkdir -p "$prefix/lib" "$prefix/bin"
  cp "$site/nvidia/cu13/bin/cuobjdump" "$prefix/bin/" && chmod +x "$prefix/bin/cuobjdump"

  lib=$prefix/lib/libcuvs.so
  cp "$site/libcuvs/lib64/libcuvs.so" "$lib"
  echo "install-cuvs-peer: pruning libcuvs.so to sm_90a" >&2
  "$python" "$here/bench/peers/cuvs_peer/prune_fatbin.py" "$lib" --keep-arch 90
  tmp=$(mktemp -d)
  (cd "$tmp" && "$prefix/bin/cuobjdump" -xelf all "$lib" >/dev/null)
  if [ "$inflate" = 1 ]; then
    "$python" "$here/bench/peers/cuvs_peer/prune_fatbin.py" "$lib" --keep-arch 90 --inflate-from "$tmp"
  fi
  # Check: only sm_90a left, and every cubin still unpacks to the same bytes.
  archs=$("$prefix/bin/cuobjdump" --list-elf "$lib" | grep -o 'sm_[0-9a-z]*' | sort -u | tr '\n' ' ')
  ptx=$("$prefix/bin/cuobjdump" --list-ptx "$lib" 2>/dev/null | grep -c . || true)
  mkdir "$tmp/after"
  (cd "$tmp/after" && "$prefix/bin/cuobjdump" -xelf all "$lib" >/dev/null)
  n_before=$(ls "$tmp"/*.cubin | wc -l)
  n_diff=0
  for f in "$tmp"/*.cubin; do cmp -s "$f" "$tmp/after/$(basename "$f")" || n_diff=$((n_diff + 1)); done
  rm -rf "$tmp"
  if [ "$archs" != "sm_90a " ] || [ "$ptx" != 0 ] || [ "$n_before" != 425 ] || [ "$n_diff" != 0 ]; then
    echo "install-cuvs-peer: pruning check failed (archs: $archs, ptx: $ptx, cubins: $n_before, differing: $n_diff)" >&2
    exit 1
  fi
  echo "install-cuvs-peer: pruned: $n_before sm_90a cubins, no PTX, all byte-identical" >&2

  cp "$site/librmm/lib64/librmm.so" "$site/rapids_logger/lib64/librapids_logger.so" \
     "$site/libkvikio/lib64/libkvikio.so" "$site"/libcuvs_cu13.libs/libgomp-*.so* \
     "$site"/libkvikio_cu13.libs/libzstd-*.so* "$prefix/lib/"
  printf '%s\n' "$want" >"$stamp"
fi

echo "prefix:   $prefix"
for f in "$prefix"/wheels/*.whl; do echo "wheel:    $(basename "$f") $(mb "$f")"; done
echo "libcuvs.so: wheel $(mb "$site/libcuvs/lib64/libcuvs.so"), pruned $(mb "$prefix/lib/libcuvs.so") on disk (freed bytes are zeros)"
for f in "$prefix"/lib/*; do [ "$(basename "$f")" = libcuvs.so ] || echo "lib:      $(basename "$f") $(mb "$f")"; done
if [ $measure = 1 ]; then
  echo "install-cuvs-peer: compressing for the record (a few minutes on 2 cores)" >&2
  for f in "$site/libcuvs/lib64/libcuvs.so" "$prefix/lib/libcuvs.so"; do
    x=$(xz -T0 -9 -c "$f" | wc -c); z=$(zstd -19 -T0 --long=27 -q -c "$f" | wc -c)
    echo "$f: xz -9 $(awk -v b="$x" 'BEGIN{printf "%.1f MB", b/1e6}'), zstd -19 --long $(awk -v b="$z" 'BEGIN{printf "%.1f MB", b/1e6}')"
  done
fi
