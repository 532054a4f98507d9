#!/usr/bin/env bash
# The Python side, in CI, against the wheel users install: `import bench_normalize` held to the
# CLI over every sample (test_module.py), and `bench-normalize mcp` driven by the Python `mcp`
# client (test_mcp_client.py), both from the one wheel .ci/wheel.sh builds (manylinux2014, abi3:
# the module and the native executable), installed into the test venvs with --no-index. The venv
# (pytest, mcp at pinned versions) is cached under
# ${XDG_CACHE_HOME:-~/.cache}/bench-normalize/python-venv-<pins> and rebuilt only when the pins
# change. Nothing else is installed.
#
# The wheel is BENCH_NORMALIZE_WHEEL when set, else dist/bench_normalize-<version>-*.whl (what
# .ci/wheel.sh leaves there, just before this script in .ci/run); when there is none, or a
# tracked source file is newer than it, .ci/wheel.sh is run first to build it.
set -euo pipefail
cd "$(dirname "$0")/../.."
T0=$SECONDS

PINS="pytest==9.2.0 mcp==2.3.0"
KEY=$(printf '%s' "$PINS" | sha256sum | cut -c1-12)
VENV="${BENCH_NORMALIZE_PY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/bench-normalize/python-venv-$KEY}"
if ! "$VENV/bin/python" -c 'import pytest, mcp' 2>/dev/null; then
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
  # shellcheck disable=SC2086
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check $PINS
fi
echo "python venv: $VENV ($((SECONDS - T0)) s)"

# The module's crate is a workspace member outside the root package's `cargo clippy`: linted here.
cargo clippy -p bench-normalize-python --quiet -- -D warnings

VERSION=$(sed -n 's/^version *= *"\(.*\)"/\1/p' Cargo.toml | head -n1)
newest_wheel() { { ls -t dist/bench_normalize-"$VERSION"-*.whl 2>/dev/null || true; } | head -n1; }
WHEEL="${BENCH_NORMALIZE_WHEEL:-}"
if [ -z "$WHEEL" ]; then
  WHEEL=$(newest_wheel)
  stale=""
  if [ -n "$WHEEL" ]; then
    stale=$(git ls-files -z -- Cargo.toml Cargo.lock build.rs pyproject.toml build-backend src parsers crates \
      | xargs -0 sh -c 'find "$@" -prune -newer "$0" -print' "$WHEEL" | head -n1 || true)
  fi
  if [ -z "$WHEEL" ] || [ -n "$stale" ]; then
    echo "no wheel in dist/, or ${stale:-a source} is newer than it: building it with .ci/wheel.sh"
    bash .ci/wheel.sh
    WHEEL=$(newest_wheel)
  fi
fi
[ -f "$WHEEL" ] || { echo "tests/python/run.sh: no wheel ($WHEEL)" >&2; exit 1; }
echo "wheel: $WHEEL"

# install_wheel VENV: the wheel replaces whatever bench-normalize the venv had (a `maturin develop`
# build included), and `import bench_normalize` must then load it from the venv's site-packages.
install_wheel() {
  local venv=$1
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --no-deps \
    --force-reinstall "$WHEEL"
  (cd /tmp && "$venv/bin/python" - "$venv" <<'PY')
import os, sys
import bench_normalize
venv, where = os.path.realpath(sys.argv[1]), os.path.realpath(bench_normalize.__file__)
if not where.startswith(venv + os.sep):
    sys.exit(f"bench_normalize is imported from {where}, not from the wheel installed in {venv}")
PY
  [ "$(head -c 4 "$venv/bin/bench-normalize" | od -An -c | tr -d ' ')" = '177ELF' ] \
    || { echo "$venv/bin/bench-normalize is not the wheel's native executable" >&2; exit 1; }
}
install_wheel "$VENV"
echo "bench_normalize installed from the wheel into the venv ($((SECONDS - T0)) s)"

# The CLI the module is held to: the wheel's own executable.
export BENCH_NORMALIZE_BIN="$VENV/bin/bench-normalize"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/python --ignore=tests/python/test_ray_archive.py
echo "tests/python: module and MCP client done in $((SECONDS - T0)) s"

# examples/ray_archive.py on a local Ray, in a venv of its own: Ray (with pyarrow, pandas) is
# ~600 MB and a few minutes to install, so it is cached apart and rebuilt only when its pins
# change; the same wheel goes into it.
RAY_PINS="ray[data]==2.60.0 pytest==9.2.0"
RAY_KEY=$(printf '%s' "$RAY_PINS" | sha256sum | cut -c1-12)
RAY_VENV="${BENCH_NORMALIZE_RAY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/bench-normalize/ray-venv-$RAY_KEY}"
if ! "$RAY_VENV/bin/python" -c 'import ray, pyarrow, pytest' 2>/dev/null; then
  rm -rf "$RAY_VENV"
  python3 -m venv "$RAY_VENV"
  # shellcheck disable=SC2086
  "$RAY_VENV/bin/python" -m pip install --quiet --disable-pip-version-check $RAY_PINS
fi
install_wheel "$RAY_VENV"
RAY_DISABLE_USAGE_STATS=1 "$RAY_VENV/bin/python" -m pytest -q -p no:cacheprovider tests/python/test_ray_archive.py
echo "tests/python: done in $((SECONDS - T0)) s"
