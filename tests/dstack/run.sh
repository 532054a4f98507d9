#!/usr/bin/env bash
# Validate every sample's `--format dstack` output against dstack's own pydantic models
# (tests/dstack/validate.py says what is checked). dstack is installed by name from the default
# package index into a venv outside the repository, cached by version: the first run takes about
# a minute, later runs a few seconds. Nothing of dstack is kept in the repository.
set -euo pipefail
cd "$(dirname "$0")/../.."

DSTACK_VERSION=0.22.5
VENV="${BENCH_NORMALIZE_DSTACK_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/bench-normalize/dstack-venv-$DSTACK_VERSION}"
PY="$VENV/bin/python"
if ! "$PY" -c "import dstack._internal.core.models.presets" 2>/dev/null; then
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
  "$PY" -m pip install --quiet --disable-pip-version-check "dstack==$DSTACK_VERSION"
fi
"$PY" -c "import importlib.metadata as m; v = m.version('dstack'); assert v == '$DSTACK_VERSION', v"

cargo build --quiet
"$PY" tests/dstack/validate.py target/debug/bench-normalize samples
