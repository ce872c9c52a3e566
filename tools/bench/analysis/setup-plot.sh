#!/usr/bin/env bash
# Installs matplotlib for tools/bench/analysis/plot_sweep.py into a git-ignored virtual environment
# (<repo>/.bundle/plot-venv by default, or $1). A benchmark-only dependency: the build and the
# tests never need it.
#   tools/bench/analysis/setup-plot.sh && .bundle/plot-venv/bin/python tools/bench/analysis/plot_sweep.py ...
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
venv="${1:-$root/.bundle/plot-venv}"
if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'matplotlib>=3.7'
"$venv/bin/python" -c 'import matplotlib; print("matplotlib", matplotlib.__version__, "in", "'"$venv"'")'
