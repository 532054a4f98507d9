#!/usr/bin/env bash
# Validate every sample's `--format llmd-br` output with llm-d's own Benchmark Report package
# (tests/llmd/validate.py says what is checked). The package is installed by name from the
# default package index into a venv outside the repository, cached by version: the first run takes
# about a minute, later runs a few seconds. Nothing of the package is kept in the repository.
set -euo pipefail
cd "$(dirname "$0")/../.."

LLMD_BR_VERSION=0.2.1
VENV="${BENCH_NORMALIZE_LLMD_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/bench-normalize/llmd-venv-$LLMD_BR_VERSION}"
PY="$VENV/bin/python"
if ! "$PY" -c "import llmd_benchmark_report" 2>/dev/null; then
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
  "$PY" -m pip install --quiet --disable-pip-version-check "llmd-benchmark-report==$LLMD_BR_VERSION"
fi
"$PY" -c "import importlib.metadata as m; v = m.version('llmd-benchmark-report'); assert v == '$LLMD_BR_VERSION', v"

cargo build --quiet
"$PY" tests/llmd/validate.py target/debug/bench-normalize samples
