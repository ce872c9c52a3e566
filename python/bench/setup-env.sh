#!/usr/bin/env bash
# The environment of python/bench/bench.py: Debian's python3-faiss (FAISS's Python API, the
# peer measured beside Sieve) and a virtual environment of Debian's python3 that sees it
# (--system-site-packages, so numpy is Debian's, the one python3-faiss was built against) with
# pandas from PyPI. Prints the environment's python on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
env="$root/build/bench-env"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! dpkg-query -W -f='${Status}' python3-faiss 2>/dev/null | grep -q "install ok installed"; then
  echo "bench setup: installing python3-faiss" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends python3-faiss >&2
fi
if [ ! -x "$env/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$env"
fi
# pandas 2.2 still supports the numpy 1.24 of Debian 12 (pandas 2.3 too, 3.x does not).
"$env/bin/python" -c 'import pandas' 2>/dev/null ||
  "$env/bin/python" -m pip install -q --disable-pip-version-check "pandas==2.2.3" >&2
echo "$env/bin/python"
