#!/usr/bin/env bash
# Builds what tools/bench/device_verify.sh runs on the H200 and packs it into
# .devpack/bundle.tar.xz (carry .devpack):
#   tools/bench/make_verify_bundle.sh BASE_REV
# This checkout's build/ (configured and built with the CUDA backend) gives gpu_tests,
# e2e_tests, sieve and gpu_paths_bench; BASE_REV (for example the previous main) is checked out
# into .variants/base (a git worktree, git-ignored, sharing this checkout's .deps) and its
# gpu_paths_bench is built there and bundled as base-gpu_paths_bench. ccache keeps the base
# build cheap when it has been built before.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 BASE_REV" >&2; exit 2; }
rev=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
tree=.variants/base
if [ -d "$tree" ]; then
  git -C "$tree" checkout -q --detach "$rev"
else
  mkdir -p .variants
  git worktree add -q --detach "$tree" "$rev"
fi
[ -e "$tree/.deps" ] || ln -s "$root/.deps" "$tree/.deps"
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tree/build" -j "${SIEVE_JOBS:-2}" --target gpu_paths_bench
find_bin() {  # find_bin BUILD_DIR NAME: the one executable NAME under BUILD_DIR
  find "$1" -name "$2" -type f -perm -u+x | grep -v CMakeFiles | head -1
}
base_bench=$(find_bin "$tree/build" gpu_paths_bench)
for b in gpu_tests e2e_tests; do [ -x "build/tests/$b" ] || { echo "no build/tests/$b" >&2; exit 1; }; done
new_bench=$(find_bin build gpu_paths_bench)
[ -n "$base_bench" ] && [ -n "$new_bench" ] || { echo "gpu_paths_bench not built" >&2; exit 1; }
echo "base $(git -C "$tree" rev-parse --short HEAD): $base_bench; this checkout $(git rev-parse --short HEAD): $new_bench"
mkdir -p .devpack
git -C "$tree" rev-parse HEAD > .devpack/base.rev
git rev-parse HEAD > .devpack/this.rev
# The CLI contract tests run the example from beside the CLI (BUILD/tools/example/).
bash tools/bench/gpu_bundle.sh build/tests/gpu_tests build/tests/e2e_tests build/tools/sieve \
  example/embed_example=build/tools/example/embed_example "gpu_paths_bench=$new_bench" "base-gpu_paths_bench=$base_bench"
