#!/usr/bin/env bash
# Builds a threshold-select kernel bench from one variant source of gpu/threshold_select.cu, for
# timing kernel variants side by side in one device call (device_ts.sh variants):
#   tools/bench/build_kernel_variant.sh NAME SRC [extra nvcc flags...]
# compiles SRC with this checkout's compile command for gpu/threshold_select.cu (from
# build/compile_commands.json), puts it into a copy of build/gpu/libsieve_gpu.a and links
# build/'s threshold_select_bench against that copy as .variants/bin/NAME-threshold_select_bench.
# SRC may be a file of another revision, e.g. `git show REV:gpu/threshold_select.cu > /tmp/x.cu`
# (it must keep the library's interface). Needs a configured and built build/.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 NAME SRC [nvcc flags...]" >&2; exit 2; }
name=$1 src=$(realpath "$2"); shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
grep -qx '/.variants/' .git/info/exclude 2>/dev/null || echo '/.variants/' >> .git/info/exclude
work=.variants/$name-obj
mkdir -p .variants/bin "$work"
cmd=$(python3 - "$root" <<'PY'
import json, sys
root = sys.argv[1]
for e in json.load(open(f"{root}/build/compile_commands.json")):
    if e["file"].endswith("gpu/threshold_select.cu") and "sieve_ts" in e["command"]:
        print(e["command"]); break
else:
    for e in json.load(open(f"{root}/build/compile_commands.json")):
        if e["file"].endswith("gpu/threshold_select.cu"):
            print(e["command"]); break
PY
)
[ -n "$cmd" ] || { echo "no compile command for gpu/threshold_select.cu in build/" >&2; exit 1; }
# Same command, this source and object.
cmd=${cmd/$root\/gpu\/threshold_select.cu/$src}
obj=$(printf '%s' "$cmd" | sed -E 's/.* -o ([^ ]+).*/\1/')
cmd=${cmd/ -o $obj/ -o $root/$work/threshold_select.cu.o}
(cd build && eval "$cmd $*")
cp build/gpu/libsieve_gpu.a "$work/lib.a"
(cd "$work" && ar r lib.a threshold_select.cu.o)
# build/'s link line for the bench, with the copy of the library.
link=$(awk '/^build gpu\/threshold_select_bench:/{f=1} f&&/LINK_LIBRARIES =/{sub(/^ *LINK_LIBRARIES = /,""); print; exit}' build/build.ninja)
lpath=$(awk '/^build gpu\/threshold_select_bench:/{f=1} f&&/LINK_PATH =/{sub(/^ *LINK_PATH = /,""); print; exit}' build/build.ninja)
link=${link/gpu\/libsieve_gpu.a/$root/$work/lib.a}
(cd build && eval "c++ -O2 gpu/CMakeFiles/threshold_select_bench.dir/bench/threshold_select_bench.cc.o -o $root/.variants/bin/$name-threshold_select_bench $lpath $link")
echo "built .variants/bin/$name-threshold_select_bench from $src"
