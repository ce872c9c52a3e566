#!/usr/bin/env bash
# Runs on the H200 through the device tool, from the repository root: unpacks the cuVS peer
# (.deps/cuvs/pack/cuvs_peer.tar.xz, made by tools/bench/peers/cuvs_peer/build.sh; carry .deps/cuvs/pack)
# and runs cuvs_peer_bench; with `both` it first runs Sieve's gpu_paths_bench from the usual
# bundle (.devpack/bundle.tar.xz, see tools/bench/device_run.sh; carry .devpack too), so the two
# are timed in one run on one GPU.
# Usage: tools/bench/peers/cuvs_peer/run.sh peer|both [cuvs_peer_bench options]   (logs go to $OUT)
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
mode=${1:-peer}
shift || true
peer=/tmp/cuvs_peer
if [ ! -x "$peer/bin/cuvs_peer_bench" ]; then
  mkdir -p "$peer" && tar -xJf .deps/cuvs/pack/cuvs_peer.tar.xz -C "$peer" || exit 1
fi

# cuVS needs cuBLAS(Lt), cuSPARSE, cuSOLVER, cuRAND, NVRTC, nvJitLink and NCCL: the image has the
# toolkit's (13.0) and, in its Python environment, the nvidia-* wheels (NCCL only there).
# The wheels' directories go first: libcuvs 26.10 was built with CUDA 13.3, and its JIT-LTO path
# (not used by brute force) binds nvJitLink 13.3 symbols lazily.
wheel_dirs=$(python3 - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia
    for root in nvidia.__path__:
        for d in sorted(glob.glob(os.path.join(root, "*", "lib")) + glob.glob(os.path.join(root, "cu13", "lib"))):
            print(d)
except Exception:
    pass
PY
)
cuda_dirs=$(printf '%s\n' $wheel_dirs /usr/local/cuda/lib64 | awk '!seen[$0]++' | paste -sd:)
export LD_LIBRARY_PATH=$peer/lib:$cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/device.txt"
{
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  ldd "$peer/bin/cuvs_peer_bench"
  for l in libnvJitLink.so.13 libcublas.so.13 libnccl.so.2; do
    p=$(ldd "$peer/bin/cuvs_peer_bench" | awk -v l=$l '$1 == l {print $3}')
    echo "$l -> $(readlink -f "$p")"
  done
} > "$OUT/cuvs_peer_ldd.txt" 2>&1
if grep -q "not found" "$OUT/cuvs_peer_ldd.txt"; then
  echo "cuvs_peer: missing libraries:"; grep "not found" "$OUT/cuvs_peer_ldd.txt"; exit 1
fi

if [ "$mode" = both ]; then
  [ -d .bundle ] || tar -xJf .devpack/bundle.tar.xz
  LD_LIBRARY_PATH=$PWD/.bundle/lib timeout 150 .bundle/bin/gpu_paths_bench \
    > "$OUT/gpu_paths_bench.jsonl" 2> "$OUT/gpu_paths_bench.txt"
  echo "gpu_paths_bench exit: $?"; grep -v "^stages" "$OUT/gpu_paths_bench.txt"
fi
timeout 400 "$peer/bin/cuvs_peer_bench" "$@" > "$OUT/cuvs_peer.jsonl" 2> "$OUT/cuvs_peer.txt"
echo "cuvs_peer_bench exit: $?"; cat "$OUT/cuvs_peer.txt"
