#!/usr/bin/env bash
# A Python venv with one package installed by name and version, outside the repository, and the
# debug build of bench-normalize; prints the venv's interpreter on stdout (the rest goes to stderr).
# Shared by tests/dstack/run.sh and tests/llmd/run.sh:
#
#   PY="$(bash tests/venv.sh NAME PACKAGE==VERSION MODULE [DIR])"
#
# NAME        the cache entry: ${XDG_CACHE_HOME:-~/.cache}/bench-normalize/NAME-venv-VERSION
# MODULE      a module the package provides: the venv is rebuilt when it does not import
# DIR         the venv's folder instead of the cache entry (when not empty)
#
# The package comes from the default package index: the first run takes about a minute, later
# runs a few seconds; the installed version is verified every time.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 3 ]; then
  echo "usage: bash tests/venv.sh NAME PACKAGE==VERSION MODULE [DIR]" >&2
  exit 2
fi
NAME="$1" SPEC="$2" MODULE="$3"
PACKAGE="${SPEC%%==*}" VERSION="${SPEC#*==}"
VENV="${4:-${XDG_CACHE_HOME:-$HOME/.cache}/bench-normalize/$NAME-venv-$VERSION}"
PY="$VENV/bin/python"
if ! "$PY" -c "import $MODULE" 2>/dev/null; then
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check "$SPEC" >&2
fi
"$PY" -c "import importlib.metadata as m; v = m.version('$PACKAGE'); assert v == '$VERSION', v"

cargo build --quiet >&2
echo "$PY"
