#!/usr/bin/env bash
# The Python side, in CI: `import bench_normalize` (crates/python, built with `maturin develop`,
# debug) held to the CLI over every sample (test_module.py), and `bench-normalize mcp` driven by
# the Python `mcp` client (test_mcp_client.py). The venv (pytest, mcp, maturin at pinned versions)
# is cached under ${XDG_CACHE_HOME:-~/.cache}/bench-normalize/python-venv-<pins> and rebuilt only
# when the pins change; the module is rebuilt incrementally in target/. Nothing else is installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
T0=$SECONDS

PINS="pytest==9.2.0 mcp==2.3.0 maturin==1.16.0"
KEY=$(printf '%s' "$PINS" | sha256sum | cut -c1-12)
VENV="${BENCH_NORMALIZE_PY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/bench-normalize/python-venv-$KEY}"
if [ ! -x "$VENV/bin/maturin" ] || ! "$VENV/bin/python" -c 'import pytest, mcp' 2>/dev/null; then
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
  # shellcheck disable=SC2086
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check $PINS
fi
echo "python venv: $VENV ($((SECONDS - T0)) s)"

cargo build --quiet
# The module's crate is a workspace member outside the root package's `cargo clippy`: linted here.
cargo clippy -p bench-normalize-python --quiet -- -D warnings
(VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" maturin develop --quiet -m crates/python/Cargo.toml)
echo "bench_normalize built into the venv ($((SECONDS - T0)) s)"

export BENCH_NORMALIZE_BIN="$PWD/target/debug/bench-normalize"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/python --ignore=tests/python/test_ray_archive.py
echo "tests/python: module and MCP client done in $((SECONDS - T0)) s"

# examples/ray_archive.py on a local Ray, in a venv of its own: Ray (with pyarrow, pandas) is
# ~600 MB and a few minutes to install, so it is cached apart and rebuilt only when its pins
# change; the module goes into it with the same (incremental) debug build.
RAY_PINS="ray[data]==2.60.0 pytest==9.2.0"
RAY_KEY=$(printf '%s' "$RAY_PINS" | sha256sum | cut -c1-12)
RAY_VENV="${BENCH_NORMALIZE_RAY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/bench-normalize/ray-venv-$RAY_KEY}"
if ! "$RAY_VENV/bin/python" -c 'import ray, pyarrow, pytest' 2>/dev/null; then
  rm -rf "$RAY_VENV"
  python3 -m venv "$RAY_VENV"
  # shellcheck disable=SC2086
  "$RAY_VENV/bin/python" -m pip install --quiet --disable-pip-version-check $RAY_PINS
fi
(VIRTUAL_ENV="$RAY_VENV" PATH="$RAY_VENV/bin:$VENV/bin:$PATH" maturin develop --quiet -m crates/python/Cargo.toml)
RAY_DISABLE_USAGE_STATS=1 "$RAY_VENV/bin/python" -m pytest -q -p no:cacheprovider tests/python/test_ray_archive.py
echo "tests/python: done in $((SECONDS - T0)) s"
