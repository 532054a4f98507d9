#!/usr/bin/env bash
# Validate every sample's `--format llmd-br` output with llm-d's own Benchmark Report package
# (tests/llmd/validate.py says what is checked). The package is installed by name into a venv
# outside the repository, cached by version (tests/venv.sh). Nothing of it is kept in the repository.
set -euo pipefail
cd "$(dirname "$0")/../.."

PY="$(bash tests/venv.sh llmd llmd-benchmark-report==0.2.1 llmd_benchmark_report "${BENCH_NORMALIZE_LLMD_VENV:-}")"
"$PY" tests/llmd/validate.py target/debug/bench-normalize samples
