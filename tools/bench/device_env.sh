# Sourced by the device scripts (device_verify.sh, device_run.sh, sweep_run.sh), run on the device
# machine from the repository root: unpacks the carried bundle (.devpack/bundle.tar.xz, made by
# tools/bench/gpu_bundle.sh; it travels compressed, the device tool carries 64 MiB at most),
# puts its libraries first on LD_LIBRARY_PATH, sets B (its binaries) and OUT (the folder that
# comes back, /tmp/out by default), and records the GPU in $OUT/device.txt.
[ -d .bundle ] || tar -xJf .devpack/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/.bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B=$PWD/.bundle/bin
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/device.txt"
