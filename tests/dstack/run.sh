#!/usr/bin/env bash
# Validate every sample's `--format dstack` output against dstack's own pydantic models
# (tests/dstack/validate.py says what is checked). dstack is installed by name into a venv outside
# the repository, cached by version (tests/venv.sh). Nothing of dstack is kept in the repository.
set -euo pipefail
cd "$(dirname "$0")/../.."

PY="$(bash tests/venv.sh dstack dstack==0.22.5 dstack._internal.core.models.presets "${BENCH_NORMALIZE_DSTACK_VENV:-}")"
"$PY" tests/dstack/validate.py target/debug/bench-normalize samples
