#!/usr/bin/env bash
# The text benchmarks' environment: the project's Python environment (tools/python-env.sh)
# plus tools/bench/requirements-text.txt (Tantivy, bm25s, the MiniLM model and its runtime).
# Idempotent. Prints the environment's python on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
py=$(bash "$root/tools/python-env.sh")
req="$root/tools/bench/requirements-text.txt"
stamp="$(dirname "$py")/../.sieve-requirements-text"
if ! cmp -s "$req" "$stamp" 2>/dev/null; then
  echo "text-env: installing $(grep -v '^#' "$req" | tr '\n' ' ')" >&2
  "$py" -m pip install -q --disable-pip-version-check -r "$req" >&2
  cp "$req" "$stamp"
fi
echo "$py"
