#!/usr/bin/env bash
# Makes the Python environment that builds and tests the Python package: a virtual environment
# of Debian's python3 (PEP 668: no system-wide pip) at ${SIEVE_PY_ENV:-build/python-env} with
# python/requirements-test.txt from PyPI. Idempotent: an environment whose requirements are
# already installed is left alone. Prints the environment's python on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
env=${SIEVE_PY_ENV:-$root/build/python-env}
python=${PYTHON:-/usr/bin/python3}
req="$root/python/requirements-test.txt"
stamp="$env/.sieve-requirements"
if [ ! -x "$env/bin/python" ]; then
  echo "python-env: creating $env from $python" >&2
  "$python" -m venv "$env"
fi
if ! cmp -s "$req" "$stamp" 2>/dev/null; then
  echo "python-env: installing $(grep -v '^#' "$req" | tr '\n' ' ')" >&2
  "$env/bin/python" -m pip install -q --disable-pip-version-check -r "$req" >&2
  cp "$req" "$stamp"
fi
echo "$env/bin/python"
