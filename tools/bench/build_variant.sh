#!/usr/bin/env bash
# Builds the GPU benchmarks of another revision (a branch with a kernel variant) beside this
# checkout's, for timing both in one device call:
#   tools/bench/build_variant.sh REV NAME
# checks REV out into a git worktree at .variants/NAME (git-ignored, sharing this checkout's
# .deps through a link), builds threshold_select_bench, gpu_paths_bench and gpu_tests there
# (ccache makes the unchanged files cheap), and copies them to .variants/bin/NAME-<binary>.
# Bundle them with this checkout's binaries, e.g.
#   tools/bench/gpu_bundle.sh build/tools/gpu_paths_bench \
#       .variants/bin/NAME-gpu_paths_bench ...
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 REV NAME" >&2; exit 2; }
rev=$1 name=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
grep -qx '/.variants/' .git/info/exclude 2>/dev/null || echo '/.variants/' >> .git/info/exclude
mkdir -p .variants/bin
tree=.variants/$name
if [ -d "$tree" ]; then
  git -C "$tree" checkout -q --detach "$rev"
else
  git worktree add -q --detach "$tree" "$rev"
fi
[ -e "$tree/.deps" ] || ln -s "$root/.deps" "$tree/.deps"
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tree/build" -j "${SIEVE_JOBS:-$(nproc)}" --target threshold_select_bench gpu_paths_bench gpu_tests
# The benchmarks sit in build/gpu/ in revisions before the tools/bench move, build/tools/ after.
for b in threshold_select_bench gpu_paths_bench gpu_tests; do
  bin=$(find "$tree/build" -name "$b" -type f -perm -u+x | grep -v CMakeFiles | head -1)
  [ -n "$bin" ] || { echo "no $b built in $tree/build" >&2; exit 1; }
  cp "$bin" ".variants/bin/$name-$b"
done
echo "built .variants/bin/$name-{threshold_select_bench,gpu_paths_bench,gpu_tests} from $(git -C "$tree" rev-parse --short HEAD)"
