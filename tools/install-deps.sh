#!/usr/bin/env bash
# Installs everything Sieve needs on a fresh Debian 12 machine (run as root or with sudo).
# Idempotent: packages already present are left alone.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
pkgs=(
  build-essential cmake ninja-build ccache pkg-config
  librocksdb-dev libroaring-dev libgflags-dev libxxhash-dev
  libboost-dev libboost-system-dev
  libgtest-dev libgmock-dev
  libopenblas-dev
  libhdf5-dev
  nlohmann-json3-dev
  # The text analyzer (text/): Unicode word boundaries and case folding; Snowball stemmers.
  libicu-dev libstemmer-dev
  libfaiss-dev
  dataset-fashion-mnist
  # WordNet 3.0's synsets (tools/wordnet.py): the real text corpus of the tests and benchmarks.
  wordnet-base
  python3 python3-numpy
  python3-venv python3-dev
  # The sanitized build and the libFuzzer targets (tools/run-sanitized.sh, tools/run-fuzz.sh);
  # llvm brings llvm-symbolizer, which names source lines in their reports.
  clang libclang-rt-14-dev llvm
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "install-deps: all Debian packages present" >&2
