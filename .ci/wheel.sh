#!/usr/bin/env bash
# Wheel check: `pip install` of the project's one wheel (pyproject.toml: maturin's pyo3 wheel of
# crates/python, plus the executable added by build-backend/bench_normalize_build.py) must give a
# native `bench-normalize` on the PATH of a Python environment and `import bench_normalize`, and
# the wheel must install where benchmarks run: serving images as old as glibc 2.17
# (manylinux2014), any CPython >= 3.9 (abi3).
#
#   1. a build venv with maturin and ziglang (PyPI's zig), cached under ~/.cache so that later
#      runs need no download; `maturin sdist` must ship the root package, the layer crates under
#      crates/ (crates/core/build.rs among them), Cargo.lock, pyproject.toml, the build backend,
#      crates/python and every parsers/*.toml (the core's build.rs compiles them into the
#      library); the sdist is unpacked into target/wheel-sdist/ (a file is rewritten only when
#      its content changed, so that Cargo rebuilds only what changed);
#   2. the one release build: `pip wheel` of that unpacked sdist (PEP 517: the in-tree backend,
#      with the build venv's maturin, MATURIN_PEP517_ARGS="--compatibility manylinux2014 --zig",
#      the cached zig on PATH), so the wheel tested is the one `pip install` of the sdist makes. Its tag must be manylinux2014 / manylinux_2_17 and cp39-abi3, the
#      module and the executable must ask for no glibc symbol newer than 2.17, and the executable
#      must be in .data/scripts/ as a native ELF file. The wheel is left in dist/ (git-ignored),
#      where tests/python/run.sh installs it from;
#   3. the wheel goes into a fresh venv with --no-index (so it can pull in nothing else): the
#      `bench-normalize` on PATH is that native file (not a Python launcher script), runs on a
#      bundled sample from outside the checkout (and in `run` mode), and `import bench_normalize`
#      loads the installed module and derives the same TPOT.
#
# `pip install .` from the source tree runs the same backend on the same files (as step 2 does
# from the sdist); it is not built a second time here, to keep CI at one release build.
#
# Run from anywhere: `bash .ci/wheel.sh`. Needs python3 (with venv and pip), cargo, and PyPI the
# first time. Everything but the caches and dist/ goes to a temp dir that is removed at the end.
# The Cargo cache is target/wheel-pep517 (git-ignored; WHEEL_TARGET_DIR overrides it), apart from
# target/release so that the wheel's builds (zig, glibc 2.17) and `cargo build --release` do not
# keep rebuilding each other's files; the build venv is ~/.cache/bench-normalize/wheel-venv
# (WHEEL_VENV overrides it).
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

export CARGO_TARGET_DIR="${WHEEL_TARGET_DIR:-$ROOT/target/wheel-pep517}"
# The wheel CI builds keeps the profile it had before the release profile became fat LTO with one
# codegen unit (docs/decisions.md, "The release build"): that profile took this build from about
# 3 to 11 minutes on 2 cores, most of CI's time. Set both to "fat" and 1 to build a wheel to ship.
export CARGO_PROFILE_RELEASE_LTO="${CARGO_PROFILE_RELEASE_LTO:-thin}"
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS="${CARGO_PROFILE_RELEASE_CODEGEN_UNITS:-4}"
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
  # pip installs a .data/scripts/ file as it is: the ELF itself, not a launcher that starts Python.
  [ "$(head -c 4 "$found" | od -An -c | tr -d ' ')" = '177ELF' ] \
    || fail "$label: $found is not a native executable: $(head -c 60 "$found" | head -n1)"
  echo "$label: $found is a native ELF executable (no Python on its start-up path)"
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

say "1/3 build venv $BUILD_VENV (cached): '$MATURIN_REQ' '$ZIG_REQ'"
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
# maturin --zig finds `zig` on PATH (in pip's isolated build environment too).
export PATH="$BUILD_VENV/bin:$ZIG_DIR:$PATH"

say "1/3 maturin sdist: it must ship what building both halves needs"
"$BUILD_VENV/bin/maturin" sdist --out "$TMP/sdist" || fail "maturin sdist"
SDIST=$(ls "$TMP"/sdist/*.tar.gz)
echo "sdist: $(basename "$SDIST") ($(stat -c %s "$SDIST") bytes)"
SRC_PARENT="$ROOT/target/wheel-sdist"
python3 - "$SDIST" "$ROOT" "$SRC_PARENT" <<'PY' || fail "the sdist is incomplete or could not be unpacked"
import os, sys, tarfile
sdist, root, parent = sys.argv[1:]
with tarfile.open(sdist) as t:
    members = [m for m in t.getmembers() if "/" in m.name]
    names = {m.name.split("/", 1)[1] for m in members}
    need = ["Cargo.toml", "Cargo.lock", "pyproject.toml", "README.md", "src/main.rs", "src/lib.rs",
            "crates/core/Cargo.toml", "crates/core/build.rs", "crates/core/src/lib.rs",
            "crates/core/src/vocabulary.toml", "crates/core/src/rules.toml",
            "crates/analysis/Cargo.toml", "crates/analysis/src/lib.rs", "crates/store/Cargo.toml",
            "crates/store/src/lib.rs", "crates/cli/Cargo.toml", "crates/cli/src/lib.rs",
            "crates/cli/src/client/clients.toml", "skills/bench-normalize/SKILL.md",
            "build-backend/bench_normalize_build.py", "crates/python/Cargo.toml", "crates/python/src/lib.rs",
            "crates/python/python/bench_normalize/__init__.py", "crates/python/python/bench_normalize/py.typed"]
    parsers = sorted("crates/core/parsers/" + f for f in os.listdir(os.path.join(root, "parsers")) if f.endswith(".toml"))
    missing = [n for n in need + parsers if n not in names]
    if missing:
        sys.exit(f"missing from the sdist: {missing}")
    print(f"sdist has all {len(need) + len(parsers)} required files, {len(parsers)} of them parsers/*.toml")
    # Unpacked at a fixed path, each file rewritten only when its content differs: Cargo then
    # rebuilds only what changed (a fresh temp dir each time would rebuild the workspace's crates
    # every time). Building another copy of the sources (the checkout itself) into the same
    # target dir overwrites the workspace's crates there: the next run here rebuilds them.
    top = members[0].name.split("/", 1)[0]
    dest = os.path.join(parent, top)
    os.makedirs(dest, exist_ok=True)
    keep, changed = set(), 0
    for m in members:
        path = os.path.normpath(os.path.join(parent, m.name))
        if not path.startswith(dest + os.sep):
            sys.exit(f"sdist member {m.name} lies outside {top}/")
        if m.isdir():
            os.makedirs(path, exist_ok=True)
            continue
        if not m.isfile():
            continue
        keep.add(path)
        data = t.extractfile(m).read()
        try:
            with open(path, "rb") as f:
                same = f.read() == data
        except OSError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
            changed += 1
    removed = 0
    for d, _, files in os.walk(dest):
        for f in files:
            p = os.path.normpath(os.path.join(d, f))
            if p not in keep:
                os.remove(p)
                removed += 1
    print(f"unpacked into {dest}: {changed} files written, {len(keep) - changed} unchanged, {removed} removed")
PY
SRC="$SRC_PARENT/bench_normalize-$VERSION"
[ -f "$SRC/pyproject.toml" ] || fail "no $SRC/pyproject.toml after unpacking the sdist"

say "2/3 pip wheel of the sdist (PEP 517, MATURIN_PEP517_ARGS='--compatibility $COMPAT --zig'): the one release build"
B0=$SECONDS
# In the build venv, without pip's build isolation (its maturin is the same pin as pyproject.toml's
# requires): maturin keys its zig wrappers, and so Cargo its fingerprints (the linker's path), by
# maturin's own path, which in an isolated build environment is a new temp dir every time, so
# every isolated build recompiles everything (~6 minutes here). WHEEL_ISOLATED=1 builds as a
# user's `pip install` does, in an isolated environment with maturin from PyPI.
ISOLATION=(--no-build-isolation)
[ "${WHEEL_ISOLATED:-0}" = 1 ] && ISOLATION=()
(cd "$TMP" && MATURIN_PEP517_ARGS="--compatibility $COMPAT --zig" \
  "$BUILD_VENV/bin/python" -m pip wheel --quiet --no-deps --no-cache-dir "${ISOLATION[@]}" --wheel-dir "$TMP/dist" "$SRC") \
  || fail "pip wheel of the sdist"
BUILD_S=$((SECONDS - B0))
WHEELS=("$TMP"/dist/*.whl)
[ "${#WHEELS[@]}" -eq 1 ] && [ -f "${WHEELS[0]}" ] || fail "expected one wheel in $TMP/dist, got: ${WHEELS[*]}"
WHEEL=${WHEELS[0]}
echo "wheel: $(basename "$WHEEL") ($(stat -c %s "$WHEEL") bytes, built in $BUILD_S s)"
case "$(basename "$WHEEL")" in
  *-cp39-abi3-*) echo "tag: abi3, one wheel for every CPython from 3.9" ;;
  *) fail "the wheel is not tagged cp39-abi3: $(basename "$WHEEL")" ;;
esac
case "$(basename "$WHEEL")" in
  *manylinux2014_*|*manylinux_2_17_*) echo "tag: installs on glibc 2.17 and later ($COMPAT)" ;;
  *) fail "the wheel is not tagged manylinux2014 / manylinux_2_17: $(basename "$WHEEL")" ;;
esac
python3 - "$WHEEL" "$GLIBC_MAX" <<'PY' || fail "the wheel's contents are wrong"
import re, sys, zipfile
wheel, most = sys.argv[1], int(sys.argv[2])
z = zipfile.ZipFile(wheel)
names = z.namelist()
for i in z.infolist():
    print(f"  {i.file_size:>10}  {i.filename}")
def native(label, name):
    data = z.read(name)
    if data[:4] != b"\x7fELF":
        sys.exit(f"{label} {name} is not an ELF file")
    # The glibc symbol versions it needs are named in its dynamic string table.
    wants = sorted({int(m) for m in re.findall(rb"GLIBC_2\.(\d+)", data)})
    if not wants or wants[-1] > most:
        sys.exit(f"{label} needs glibc 2.{wants[-1] if wants else '?'}; at most 2.{most} allowed")
    print(f"{label}: {name}, ELF, needs glibc 2.{wants[-1]} at most (<= 2.{most})")
exe = [n for n in names if n.endswith(".data/scripts/bench-normalize")]
if len(exe) != 1:
    sys.exit(f"expected one *.data/scripts/bench-normalize in the wheel, found {exe}")
native("executable", exe[0])
mod = [n for n in names if n.startswith("bench_normalize/_native.") and n.endswith(".so")]
if mod != ["bench_normalize/_native.abi3.so"]:
    sys.exit(f"expected the module bench_normalize/_native.abi3.so, found {mod}")
native("module", mod[0])
for n in ("bench_normalize/__init__.py", "bench_normalize/py.typed"):
    if n not in names:
        sys.exit(f"{n} is missing from the wheel")
record = next(n for n in names if n.endswith(".dist-info/RECORD"))
listed = {l.split(",")[0] for l in z.read(record).decode().splitlines() if l}
if set(names) != listed:
    sys.exit(f"RECORD and the wheel differ: {sorted(set(names) ^ listed)}")
print("RECORD lists every file of the wheel")
PY
# Kept for tests/python/run.sh and bench/run.sh (and anyone: `pip install dist/*.whl`).
mkdir -p "$ROOT/dist"
rm -f "$ROOT"/dist/bench_normalize-*.whl
cp "$WHEEL" "$ROOT/dist/"
echo "copied to dist/$(basename "$WHEEL")"

say "3/3 fresh venv: pip install --no-index $(basename "$WHEEL")"
python3 -m venv "$TMP/wheel-venv"
"$TMP/wheel-venv/bin/python" -m pip install --quiet --no-index "$WHEEL" || fail "pip install the wheel"
check_env "$TMP/wheel-venv" "wheel"
(cd "$TMP" && "$TMP/wheel-venv/bin/python" - "$TMP/wheel-venv" "$VERSION" "$SAMPLE" "$EXPECT_METHOD" <<'PY') \
  || fail "wheel: import bench_normalize failed"
import os, pathlib, sys
venv, version, sample, method = sys.argv[1:]
import bench_normalize as bn
where = os.path.realpath(bn.__file__)
assert where.startswith(os.path.realpath(venv) + os.sep), f"bench_normalize imported from {where}, not the venv"
assert bn.__version__ == version, (bn.__version__, version)
run = bn.normalize(pathlib.Path(sample))[0]
assert run["derived"]["tpot_ms"]["method"] == method, run["derived"]["tpot_ms"]
print(f"wheel: import bench_normalize {bn.__version__} from {where}: TPOT {run['derived']['tpot_ms']['mean']} ms ({method})")
PY

say "OK: $(basename "$WHEEL") ($(stat -c %s "$WHEEL") bytes, built in $BUILD_S s) gives bench-normalize $VERSION on PATH and import bench_normalize ($((SECONDS - T0)) s)"
