#!/usr/bin/env bash
# Packs binaries for the H200 (the device tool carries the repository's working tree, so the
# bundle travels inside it, git-ignored):
#   tools/bench/gpu_bundle.sh BINARY [BINARY...]
# copies the binaries into .bundle/bin and the shared libraries they need that the device
# machine does not have (everything but glibc, libstdc++/libgcc and the CUDA toolkit's own
# libraries) into .bundle/lib, strips them, and compresses .bundle into .devpack/bundle.tar.xz
# (carry .devpack: the device tool carries 64 MiB at most). On the device,
# tools/bench/device_env.sh unpacks it. A binary named NAME=PATH is copied as NAME (which may
# name a folder under .bundle/bin, e.g. example/embed_example).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 [NAME=]BINARY..." >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
rm -rf .bundle
mkdir -p .bundle/bin .bundle/lib .devpack
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread\.so|libstdc\+\+|libgcc_s|libcuda\.so|libcudart|libcublas|libcublasLt|libcusparse|libcurand|libcusolver|libcufft|libnvJitLink|libnvrtc|libnccl)'
for arg in "$@"; do
  name=$(basename "$arg")
  path=$arg
  if [[ "$arg" == *=* ]]; then
    name=${arg%%=*}
    path=${arg#*=}
  fi
  [ -x "$path" ] || { echo "gpu_bundle: no executable $path" >&2; exit 1; }
  mkdir -p "$(dirname ".bundle/bin/$name")"
  cp -L "$path" ".bundle/bin/$name"
  ldd "$path" | awk '/=>/ {print $1, $3}' | while read -r lib where; do
    [[ "$lib" =~ $skip ]] && continue
    [ -f "$where" ] && cp -Ln "$where" .bundle/lib/ 2>/dev/null || true
  done
done
find .bundle/bin -type f -exec strip {} + 2>/dev/null || true
tar -cJf .devpack/bundle.tar.xz .bundle
du -sh .devpack/bundle.tar.xz | awk '{print "gpu_bundle: .devpack/bundle.tar.xz is " $1 " (the device tool carries 64 MiB at most)"}'
