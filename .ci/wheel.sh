#!/usr/bin/env bash
# Wheel check: pyproject.toml (maturin, bindings = "bin") must put a working `bench-normalize` on
# the PATH of a Python environment, from a built wheel and from `pip install .`.
#
#   1. a throwaway venv gets maturin from PyPI; `maturin sdist` must ship build.rs, Cargo.lock,
#      pyproject.toml and every parsers/*.toml (build.rs compiles them into the binary);
#   2. `maturin build --release` builds the wheel (the one full release build);
#   3. the wheel goes into a fresh venv with --no-index (so it can pull in nothing else) and the
#      installed `bench-normalize` runs on a bundled sample from outside the checkout;
#   4. `pip install .` (a PEP 517 build from the source tree, maturin from PyPI in pip's isolated
#      build environment) into a third venv, checked the same way. It shares the Cargo target dir
#      with step 2, so it reuses that build instead of compiling again.
#
# Run from anywhere: `bash .ci/wheel.sh`. Needs python3 (with venv and pip), cargo, and PyPI.
# Everything but the Cargo build cache goes to a temp dir that is removed at the end. The cache is
# target/wheel (git-ignored; WHEEL_TARGET_DIR overrides it), kept apart from target/release so
# that maturin's builds and `cargo build --release` do not keep rebuilding each other's binary.
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T0=$SECONDS

say() { printf '\n== wheel.sh [%4ds] %s\n' "$((SECONDS - T0))" "$*"; }
fail() { printf '\nwheel.sh: FAIL: %s\n' "$*" >&2; exit 1; }

# The same loose pin as pyproject.toml's [build-system] requires.
MATURIN_REQ='maturin>=1.5,<2'
SAMPLE="$ROOT/samples/versions/sglang0.5.5.post1-oai-s2.stdout.txt"
EXPECT_METHOD='e2e-ttft-tokens'

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then export PATH="$HOME/.cargo/bin:$PATH"; else
    fail "cargo not found: install Rust (https://rustup.rs)"; fi
fi
command -v python3 >/dev/null 2>&1 || fail "python3 not found"
[ -f "$SAMPLE" ] || fail "sample $SAMPLE is missing"
VERSION=$(sed -n 's/^version *= *"\(.*\)"/\1/p' Cargo.toml | head -n1)
[ -n "$VERSION" ] || fail "no version in Cargo.toml"

export CARGO_TARGET_DIR="${WHEEL_TARGET_DIR:-$ROOT/target/wheel}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-normalize-wheel.XXXXXX")
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "wheel.sh: bench-normalize $VERSION; temp dir $TMP (removed at exit); CARGO_TARGET_DIR=$CARGO_TARGET_DIR"
python3 --version
cargo --version

# check_env VENV LABEL: the venv's `bench-normalize` is the one on PATH once the venv is active,
# runs outside the checkout (the parser definitions are compiled in), and derives TPOT.
check_env() {
  local venv=$1 label=$2 out rc found
  found=$(cd "$TMP" && PATH="$venv/bin:$PATH" command -v bench-normalize) \
    || fail "$label: bench-normalize is not on PATH with $venv/bin first"
  [ "$found" = "$venv/bin/bench-normalize" ] \
    || fail "$label: bench-normalize on PATH is $found, not $venv/bin/bench-normalize"
  echo "$label: on PATH: $found"
  out=$(cd "$TMP" && PATH="$venv/bin:$PATH" bench-normalize --version) \
    || fail "$label: bench-normalize --version exited $?"
  echo "$label: --version: $out"
  [ "$out" = "bench-normalize $VERSION" ] || fail "$label: expected 'bench-normalize $VERSION'"
  echo "$label: running: bench-normalize ${SAMPLE#"$ROOT"/} (from $TMP)"
  set +e
  out=$(cd "$TMP" && PATH="$venv/bin:$PATH" bench-normalize "$SAMPLE")
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || fail "$label: bench-normalize exited $rc (expected 0)"
  printf '%s' "$out" | python3 -c '
import json, sys
want, label = sys.argv[1], sys.argv[2]
doc = json.load(sys.stdin)
def methods(x):
    if isinstance(x, dict):
        for k, v in x.items():
            if k == "method":
                yield v
            yield from methods(v)
    elif isinstance(x, list):
        for v in x:
            yield from methods(v)
found = list(methods(doc))
if want not in found:
    sys.exit(f"{label}: no \"method\": \"{want}\" in the JSON output (methods: {found})")
tpot = [r.get("derived", {}).get("tpot_ms", {}).get("mean") for r in doc.get("runs", [])]
print(f"{label}: exit 0, JSON has \"method\": \"{want}\" (derived TPOT ms: {tpot})")
' "$EXPECT_METHOD" "$label" || fail "$label: the JSON output is wrong"
}

say "1/4 build venv: pip install '$MATURIN_REQ' (from PyPI)"
python3 -m venv "$TMP/build-venv"
"$TMP/build-venv/bin/python" -m pip install --quiet "$MATURIN_REQ" || fail "pip install maturin"
"$TMP/build-venv/bin/maturin" --version

say "1/4 maturin sdist: it must ship build.rs, Cargo.lock, pyproject.toml and parsers/*.toml"
"$TMP/build-venv/bin/maturin" sdist --out "$TMP/sdist" || fail "maturin sdist"
SDIST=$(ls "$TMP"/sdist/*.tar.gz)
echo "sdist: $(basename "$SDIST") ($(stat -c %s "$SDIST") bytes)"
python3 - "$SDIST" "$ROOT" <<'EOF' || fail "the sdist is incomplete"
import os, sys, tarfile
sdist, root = sys.argv[1], sys.argv[2]
with tarfile.open(sdist) as t:
    names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
need = ["build.rs", "Cargo.toml", "Cargo.lock", "pyproject.toml", "README.md", "src/main.rs", "src/lib.rs"]
need += sorted("parsers/" + f for f in os.listdir(os.path.join(root, "parsers")) if f.endswith(".toml"))
missing = [n for n in need if n not in names]
if missing:
    sys.exit(f"missing from the sdist: {missing}")
print(f"sdist has all {len(need)} required files, {len(need) - 7} of them parsers/*.toml")
EOF

say "2/4 maturin build --release (the one full release build)"
"$TMP/build-venv/bin/maturin" build --release --out "$TMP/dist" || fail "maturin build"
WHEELS=("$TMP"/dist/*.whl)
[ "${#WHEELS[@]}" -eq 1 ] && [ -f "${WHEELS[0]}" ] || fail "expected one wheel in $TMP/dist, got: ${WHEELS[*]}"
WHEEL=${WHEELS[0]}
echo "wheel: $(basename "$WHEEL") ($(stat -c %s "$WHEEL") bytes)"
python3 - "$WHEEL" <<'EOF' || fail "the wheel has no bench-normalize script"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
for n in names:
    print("  " + n)
if not any(n.endswith(".data/scripts/bench-normalize") for n in names):
    sys.exit("no *.data/scripts/bench-normalize in the wheel")
EOF

say "3/4 fresh venv: pip install --no-index $(basename "$WHEEL")"
python3 -m venv "$TMP/wheel-venv"
"$TMP/wheel-venv/bin/python" -m pip install --quiet --no-index "$WHEEL" || fail "pip install the wheel"
check_env "$TMP/wheel-venv" "wheel"

say "4/4 fresh venv: pip install . (PEP 517 build from the source tree, shared CARGO_TARGET_DIR)"
python3 -m venv "$TMP/src-venv"
(cd "$TMP" && "$TMP/src-venv/bin/python" -m pip install --quiet "$ROOT") || fail "pip install ."
check_env "$TMP/src-venv" "pip install ."

say "OK: $(basename "$WHEEL") installs bench-normalize $VERSION on PATH, and so does pip install . ($((SECONDS - T0)) s)"
