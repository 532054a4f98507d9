#!/usr/bin/env bash
# Wheel check: pyproject.toml (maturin, bindings = "bin") must put a working `bench-normalize` on
# the PATH of a Python environment, from a built wheel and from `pip install .`, and the wheel
# must install where benchmarks run: serving images as old as glibc 2.17 (manylinux2014).
#
#   1. a build venv with maturin and ziglang (PyPI's zig), cached under ~/.cache so that later
#      runs need no download; `maturin sdist` must ship build.rs, Cargo.lock, pyproject.toml and
#      every parsers/*.toml (build.rs compiles them into the binary);
#   2. `maturin build --release --compatibility manylinux2014 --zig`: zig links against glibc
#      2.17 (and compiles mimalloc's C with `zig cc`); the wheel's tag must be manylinux2014 /
#      manylinux_2_17 and the executable must ask for no glibc symbol newer than 2.17;
#   3. the wheel goes into a fresh venv with --no-index (so it can pull in nothing else) and the
#      installed `bench-normalize` runs on a bundled sample from outside the checkout;
#   4. `pip install .` (a PEP 517 build from the source tree, maturin from PyPI in pip's isolated
#      build environment, MATURIN_PEP517_ARGS giving it step 2's options, the cached zig on PATH)
#      into a third venv, checked the same way. Its Cargo target dir is target/wheel-pep517, not
#      step 2's: the isolated build's environment differs from step 2's, and sharing one dir made
#      each build recompile everything the other had built; apart, both are incremental.
#
# Run from anywhere: `bash .ci/wheel.sh`. Needs python3 (with venv and pip), cargo, and PyPI the
# first time. Everything but the caches goes to a temp dir that is removed at the end. The Cargo
# caches are target/wheel and target/wheel-pep517 (git-ignored; WHEEL_TARGET_DIR overrides the
# first, the second is beside it), kept apart from target/release so that maturin's builds and
# `cargo build --release` do not keep rebuilding each other's binary; the build venv is
# ~/.cache/bench-normalize/wheel-venv (WHEEL_VENV overrides it).
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T0=$SECONDS

say() { printf '\n== wheel.sh [%4ds] %s\n' "$((SECONDS - T0))" "$*"; }
fail() { printf '\nwheel.sh: FAIL: %s\n' "$*" >&2; exit 1; }

# The same loose pin as pyproject.toml's [build-system] requires; zig from PyPI's ziglang.
MATURIN_REQ='maturin>=1.5,<2'
ZIG_REQ='ziglang<0.18'
# The oldest glibc the wheel must install on: manylinux2014 (CentOS 7, Ubuntu 18.04 and later).
COMPAT=manylinux2014
GLIBC_MAX=17
BUILD_VENV="${WHEEL_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/bench-normalize/wheel-venv}"
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
mkdir -p "$TMP/run-cwd"
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
  # `run` mode (process group, signal forwarding, a temp dir) in this build: a command run as
  # given, its output read as the run, nothing left in the working directory.
  set +e
  out=$(cd "$TMP/run-cwd" && PATH="$venv/bin:$PATH" bench-normalize run --format jsonl -- cat "$SAMPLE" 2>/dev/null)
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || fail "$label: bench-normalize run -- cat SAMPLE exited $rc (expected 0)"
  [ -z "$(ls -A "$TMP/run-cwd")" ] || fail "$label: run left files in the working directory: $(ls -A "$TMP/run-cwd")"
  printf '%s' "$out" | python3 -c '
import json, sys
run = json.loads(sys.stdin.readline())
src = run["source"]["run"]
assert src["exit_code"] == 0 and src["command"][0] == "cat", src
assert run["derived"]["tpot_ms"]["method"] == sys.argv[2], run["derived"]["tpot_ms"]
print(f"{sys.argv[1]}: run -- cat SAMPLE: exit 0, source.run recorded, nothing left behind")
' "$label" "$EXPECT_METHOD" || fail "$label: the run-mode output is wrong"
}

say "1/4 build venv $BUILD_VENV (cached): '$MATURIN_REQ' '$ZIG_REQ'"
STAMP="$BUILD_VENV/.bench-normalize-wheel-venv"
if [ ! -x "$BUILD_VENV/bin/maturin" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$MATURIN_REQ $ZIG_REQ" ]; then
  rm -rf "$BUILD_VENV"
  python3 -m venv "$BUILD_VENV"
  "$BUILD_VENV/bin/python" -m pip install --quiet "$MATURIN_REQ" "$ZIG_REQ" || fail "pip install maturin ziglang"
  echo "$MATURIN_REQ $ZIG_REQ" > "$STAMP"
fi
"$BUILD_VENV/bin/maturin" --version
ZIG_DIR=$("$BUILD_VENV/bin/python" -c 'import os, ziglang; print(os.path.dirname(ziglang.__file__))') \
  || fail "ziglang is not importable in $BUILD_VENV"
echo "zig $("$ZIG_DIR/zig" version) ($ZIG_DIR/zig)"
# maturin --zig finds `zig` on PATH (and so does the PEP 517 build of step 4).
export PATH="$BUILD_VENV/bin:$ZIG_DIR:$PATH"

say "1/4 maturin sdist: it must ship build.rs, Cargo.lock, pyproject.toml and parsers/*.toml"
"$BUILD_VENV/bin/maturin" sdist --out "$TMP/sdist" || fail "maturin sdist"
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

say "2/4 maturin build --release --compatibility $COMPAT --zig (the one full release build)"
"$BUILD_VENV/bin/maturin" build --release --compatibility "$COMPAT" --zig --out "$TMP/dist" || fail "maturin build"
WHEELS=("$TMP"/dist/*.whl)
[ "${#WHEELS[@]}" -eq 1 ] && [ -f "${WHEELS[0]}" ] || fail "expected one wheel in $TMP/dist, got: ${WHEELS[*]}"
WHEEL=${WHEELS[0]}
echo "wheel: $(basename "$WHEEL") ($(stat -c %s "$WHEEL") bytes)"
case "$(basename "$WHEEL")" in
  *manylinux2014_*|*manylinux_2_17_*) echo "tag: installs on glibc 2.17 and later ($COMPAT)" ;;
  *) fail "the wheel is not tagged manylinux2014 / manylinux_2_17: $(basename "$WHEEL")" ;;
esac
python3 - "$WHEEL" "$GLIBC_MAX" <<'EOF2' || fail "the wheel's executable is wrong"
import re, sys, zipfile
wheel, most = sys.argv[1], int(sys.argv[2])
z = zipfile.ZipFile(wheel)
names = z.namelist()
for n in names:
    print("  " + n)
exe = [n for n in names if n.endswith(".data/scripts/bench-normalize")]
if not exe:
    sys.exit("no *.data/scripts/bench-normalize in the wheel")
data = z.read(exe[0])
# The glibc symbol versions it needs are named in its dynamic string table.
wants = sorted({int(m) for m in re.findall(rb"GLIBC_2\.(\d+)", data)})
if not wants or wants[-1] > most:
    sys.exit(f"the executable needs glibc 2.{wants[-1] if wants else '?'}; at most 2.{most} allowed")
print(f"executable: needs glibc 2.{wants[-1]} at most (<= 2.{most})")
EOF2

say "3/4 fresh venv: pip install --no-index $(basename "$WHEEL")"
python3 -m venv "$TMP/wheel-venv"
"$TMP/wheel-venv/bin/python" -m pip install --quiet --no-index "$WHEEL" || fail "pip install the wheel"
check_env "$TMP/wheel-venv" "wheel"

say "4/4 fresh venv: pip install . (PEP 517 build from the source tree, CARGO_TARGET_DIR=$CARGO_TARGET_DIR-pep517)"
python3 -m venv "$TMP/src-venv"
(cd "$TMP" && CARGO_TARGET_DIR="$CARGO_TARGET_DIR-pep517" MATURIN_PEP517_ARGS="--compatibility $COMPAT --zig" \
  "$TMP/src-venv/bin/python" -m pip install --quiet "$ROOT") \
  || fail "pip install ."
check_env "$TMP/src-venv" "pip install ."

say "OK: $(basename "$WHEEL") installs bench-normalize $VERSION on PATH, and so does pip install . ($((SECONDS - T0)) s)"
