#!/usr/bin/env bash
# Benchmark bench-normalize against the alternatives (see bench/README.md).
#
#   bash bench/run.sh [--mb 200] [--requests 100000] [--reps 3] [--runs 300] [--regen] [--no-build]
#
#   --mb N        size of the generated text log bench/out/big.log in MiB (default 200)
#   --requests N  requests in the generated result file bench/out/detailed.json (default 100000)
#   --reps N      timed repetitions (interleaved rounds) of every measurement; median reported (3)
#   --runs N      invocations of the per-invocation (start-up) measurement (300)
#   --regen       regenerate the data even if bench/out already holds it with the same parameters
#   --no-build    do not run `cargo build --release` (use target/release/bench-normalize as it is)
#   --out DIR     data and results folder (default bench/out, git-ignored)
#
# Steps: build the release binary (and snapshot it to OUT/bench-normalize, so that a rebuild by
# someone else during the run cannot change what is measured); generate the data if absent
# (bench/generate.py); warm the page cache; time, side by side, bench-normalize, the Python
# baselines (bench/baseline_regex.py, bench/baseline_json.py) and `grep -F -c` (the floor for
# scanning the text), with /usr/bin/time -v for peak RSS; time one small log against
# `python3 -c pass` (hyperfine when installed, else a loop), and, when dist/ holds the wheel
# (`bash .ci/wheel.sh` builds it), the executable installed from it beside the release binary and
# `import bench_normalize` (a console script's floor); check that bench-normalize found every
# block and the right per-request TPOT; print a Markdown table and PASS/FAIL per target (also saved
# to OUT/results.md). Exit status: 0 if every target and check passes, 1 if any fails, 2 on a
# harness error (bad option, missing tool, build failure without a binary).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

MB=200
REQUESTS=100000
REPS=3
RUNS=300
REGEN=0
BUILD=1
OUT="$ROOT/bench/out"
while [ $# -gt 0 ]; do
  case "$1" in
    --mb) MB="$2"; shift 2 ;;
    --requests) REQUESTS="$2"; shift 2 ;;
    --reps) REPS="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --regen) REGEN=1; shift ;;
    --no-build) BUILD=0; shift ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
log() { printf '[bench] %s\n' "$*" >&2; }

# ---- tools ----------------------------------------------------------------------------------
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
# The real interpreter, not a version-manager shim (a pyenv shim is a shell script that adds
# tens of milliseconds to every start-up).
PY="$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)" || { echo "run.sh: python3 not found" >&2; exit 2; }
TIME=/usr/bin/time
if [ ! -x "$TIME" ]; then
  echo "run.sh: $TIME is missing; install it with: apt-get install -y time" >&2; exit 2
fi
HYPERFINE="$(command -v hyperfine || true)"

# ---- build ----------------------------------------------------------------------------------
BIN_SRC="$ROOT/target/release/bench-normalize"
BUILD_NOTE="built now"
if [ "$BUILD" = 1 ]; then
  log "cargo build --release"
  # (and the example that times writing the report alone: see the serializer row below)
  if ! cargo build --release --quiet --bin bench-normalize --example serialize_only 2>"$OUT/build.log"; then
    if [ -x "$BIN_SRC" ]; then
      BUILD_NOTE="BUILD FAILED (see $OUT/build.log); measuring the existing binary, which may be stale"
      log "$BUILD_NOTE"
    else
      cat "$OUT/build.log" >&2; echo "run.sh: build failed and no binary exists" >&2; exit 2
    fi
  fi
else
  BUILD_NOTE="not rebuilt (--no-build)"
fi
[ -x "$BIN_SRC" ] || { echo "run.sh: $BIN_SRC missing" >&2; exit 2; }
BN="$OUT/bench-normalize"
cp -f "$BIN_SRC" "$BN"
SER="$OUT/serialize_only"
rm -f "$SER"
[ -x "$ROOT/target/release/examples/serialize_only" ] && cp -f "$ROOT/target/release/examples/serialize_only" "$SER"
# The executable as `pip install` of the wheel puts it on PATH (dist/, from .ci/wheel.sh: built
# with zig against glibc 2.17), installed into a venv of its own under OUT; skipped with a note
# when there is no wheel. The wheel's own `import bench_normalize` is timed too: the least a
# console-script entry point into the module would cost per invocation.
WHEEL="$(ls -t "$ROOT"/dist/bench_normalize-*.whl 2>/dev/null | head -n1)"
WBN=""; WPY=""; WHEEL_NOTE="no wheel in dist/ (bash .ci/wheel.sh builds it)"
if [ -n "$WHEEL" ]; then
  WVENV="$OUT/wheel-venv"
  if [ "$(cat "$WVENV/.wheel" 2>/dev/null)" != "$(md5sum <"$WHEEL")" ]; then
    log "installing $(basename "$WHEEL") into $WVENV"
    rm -rf "$WVENV"
    if "$PY" -m venv "$WVENV" && "$WVENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --no-deps "$WHEEL"; then
      md5sum <"$WHEEL" >"$WVENV/.wheel"
    else
      WHEEL_NOTE="installing $(basename "$WHEEL") failed"; log "$WHEEL_NOTE"
    fi
  fi
  if [ -x "$WVENV/bin/bench-normalize" ] && [ -s "$WVENV/.wheel" ]; then
    WBN="$WVENV/bin/bench-normalize"; WPY="$WVENV/bin/python"
    WHEEL_NOTE="$(basename "$WHEEL"), $(( $(stat -c %s "$WHEEL") / 1024 )) KiB, built $(date -u -r "$WHEEL" '+%Y-%m-%d %H:%M UTC')"
  fi
fi
REV="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
DIRTY="$(git -C "$ROOT" status --porcelain -- src crates parsers Cargo.toml 2>/dev/null | wc -l)"

# ---- data -----------------------------------------------------------------------------------
meta_get() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"d": d}))' "$@"; }
need_json=1
# The data is made from the samples and the generator: when either changed since it was made,
# it is made again (as with --regen).
FINGERPRINT="$(cat "$ROOT"/bench/generate.py "$ROOT"/samples/captured/* "$ROOT"/samples/versions/* "$ROOT"/samples/public/* | md5sum | cut -d' ' -f1)"
if [ "$REGEN" = 0 ] && [ "$(cat "$OUT/inputs.fingerprint" 2>/dev/null)" != "$FINGERPRINT" ] &&
   { [ -e "$OUT/big.log" ] || [ -e "$OUT/detailed.json" ]; }; then
  log "the samples or the generator changed since the data was made: making it again"
  REGEN=1
fi
if [ "$REGEN" = 0 ] && [ -s "$OUT/detailed.json" ] && [ -s "$OUT/detailed.expected.json" ] &&
   [ "$(meta_get "$OUT/detailed.expected.json" 'd["params"]["requests"]')" = "$REQUESTS" ] &&
   [ "$(stat -c %s "$OUT/detailed.json")" = "$(meta_get "$OUT/detailed.expected.json" 'd["bytes"]')" ]; then
  need_json=0
fi
# The text logs, each made again unless it is there with the same --mb, --noise and byte count:
# big.log (80% noise), and issue 33's two: dense.log, the samples back to back (every run
# reported), and server.log, a server log with a block now and then (99% of the bytes noise).
for spec in big:0.8 dense:0 server:0.99; do
  name="${spec%%:*}"; noise="${spec#*:}"
  if [ "$REGEN" = 1 ] || [ ! -s "$OUT/$name.log" ] || [ ! -s "$OUT/$name.meta.json" ] ||
     [ "$(meta_get "$OUT/$name.meta.json" '(float(d["params"]["mb"]), float(d["params"]["noise"]))')" != \
       "$("$PY" -c "print((float($MB), float($noise)))")" ] ||
     [ "$(stat -c %s "$OUT/$name.log")" != "$(meta_get "$OUT/$name.meta.json" 'd["bytes"]')" ]; then
    log "generating $name.log (--mb $MB --noise $noise)"
    "$PY" bench/generate.py "$OUT" --mb "$MB" --noise "$noise" --only log --log-name "$name" >/dev/null || exit 2
  fi
done
if [ "$need_json" = 1 ]; then
  log "generating detailed.json (--requests $REQUESTS; takes ~30 s for 100k)"
  "$PY" bench/generate.py "$OUT" --requests "$REQUESTS" --only json || exit 2
fi
# many small logs: the captured and versions stdout samples, 40 times over, one file each (an
# archive of sweep logs), and the same bytes as one file
MANY="$OUT/many"
if [ "$REGEN" = 1 ] || [ ! -s "$OUT/many.all.log" ]; then
  log "copying the sample logs into many/"
  rm -rf "$MANY" && mkdir -p "$MANY" || exit 2
  i=0
  for r in $(seq 1 40); do
    for f in "$ROOT"/samples/captured/*.stdout.txt "$ROOT"/samples/versions/*.stdout.txt; do
      i=$((i + 1)); cp "$f" "$MANY/$(printf %05d "$i").txt" || exit 2
    done
  done
  cat "$MANY"/*.txt >"$OUT/many.all.log" || exit 2
fi
# the store: 10,000 runs in one log (one captured block, 10,000 times: 10,000 blocks, each its own
# natural key), added to a new SQLite store in one `store add`
STORE_LOG="$OUT/store10k.log"
STORE_RUNS=10000
if [ "$REGEN" = 1 ] || [ ! -s "$STORE_LOG" ]; then
  log "writing store10k.log ($STORE_RUNS blocks)"
  "$PY" -c 'import sys; b = open(sys.argv[1]).read(); open(sys.argv[2], "w").write(b * int(sys.argv[3]))' \
    "$ROOT/samples/captured/vllm-s2.stdout.txt" "$STORE_LOG" "$STORE_RUNS" || exit 2
fi
echo "$FINGERPRINT" >"$OUT/inputs.fingerprint"
BIG="$OUT/big.log"
DENSE="$OUT/dense.log"
SERVER="$OUT/server.log"
DET="$OUT/detailed.json"
SMALL="$ROOT/samples/captured/vllm-s2.stdout.txt"
BLOCKS="$(meta_get "$OUT/big.meta.json" 'd["blocks"]')"

# ---- measuring ------------------------------------------------------------------------------
RAW="$OUT/measurements.raw.tsv"
printf 'id\tinput_bytes\trep\twall_ns\tpeak_rss_kb\texit\n' >"$RAW"

# once ID INPUT_FILE REP CMD...: one timed run, stdout to $SINK (default /dev/null); wall time
# from date +%s%N, peak RSS from /usr/bin/time -v ("Maximum resident set size").
once() {
  local id="$1" input="$2" rep="$3" sink="${SINK:-/dev/null}" t0 t1 r c; shift 3
  local cmd="$*"
  [ ${#cmd} -gt 160 ] && cmd="${cmd:0:160} ..."
  [ "$rep" = 1 ] && log "timing $id: $cmd"
  t0=$(date +%s%N)
  "$TIME" -v -o "$OUT/time.$id.txt" "$@" >"$sink" 2>"$OUT/stderr.$id.txt"
  t1=$(date +%s%N)
  r=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$OUT/time.$id.txt")
  c=$(awk -F': ' '/Exit status/ {print $2}' "$OUT/time.$id.txt")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$(stat -c %s "$input")" "$rep" "$((t1 - t0))" "${r:-0}" "${c:-?}" >>"$RAW"
}

log "warming the page cache"
cat "$BIG" "$DENSE" "$SERVER" "$DET" "$SMALL" "$BN" ${WBN:+"$WBN"} "$MANY"/*.txt "$OUT/many.all.log" "$STORE_LOG" >/dev/null
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"

# The repetitions are interleaved (round-robin over the commands) so that a change of machine
# load during the run affects every command alike; the report takes the median per command.
for ((rep = 1; rep <= REPS; rep++)); do
  log "round $rep of $REPS"
  # text log: bench-normalize vs the Python baseline vs grep -F -c
  once bn_text "$BIG" "$rep" "$BN" --format jsonl "$BIG"
  # the same log in the default format (one JSON document, written a run at a time), for reference
  once bn_text_doc "$BIG" "$rep" "$BN" "$BIG"
  # the same log through a pipe (read as a stream: `zcat logs.gz | bench-normalize`), for reference
  once bn_text_pipe "$BIG" "$rep" sh -c 'cat "$1" | "$2" --format jsonl' sh "$BIG" "$BN"
  once py_text "$BIG" "$rep" "$PY" bench/baseline_regex.py "$BIG"
  once py_text_naive "$BIG" "$rep" "$PY" bench/baseline_regex.py --text "$BIG"
  # (not to /dev/null: GNU grep notices a /dev/null stdout and stops at the first match)
  SINK="$OUT/grep.count" once grep_text "$BIG" "$rep" grep -F -c 'Serving Benchmark Result' "$BIG"
  # issue 33: the dense log, the report written to a file (the default JSON document, and CSV);
  # the server log
  SINK="$OUT/dense.bn.json" once bn_dense "$DENSE" "$rep" "$BN" "$DENSE"
  SINK="$OUT/dense.bn.csv" once bn_dense_csv "$DENSE" "$rep" "$BN" --format csv "$DENSE"
  once py_dense "$DENSE" "$rep" "$PY" bench/baseline_regex.py "$DENSE"
  SINK="$OUT/grep.dense.count" once grep_dense "$DENSE" "$rep" grep -F -c 'Serving Benchmark Result' "$DENSE"
  SINK="$OUT/server.bn.json" once bn_server "$SERVER" "$rep" "$BN" "$SERVER"
  once py_server "$SERVER" "$rep" "$PY" bench/baseline_regex.py "$SERVER"
  SINK="$OUT/grep.server.count" once grep_server "$SERVER" "$rep" grep -F -c 'Serving Benchmark Result' "$SERVER"
  # many small logs: in parallel, one per core, vs the same bytes as one file, vs Python
  once bn_many "$OUT/many.all.log" "$rep" "$BN" --format jsonl "$MANY"/*.txt
  once bn_many_one "$OUT/many.all.log" "$rep" "$BN" --format jsonl "$OUT/many.all.log"
  once py_many "$OUT/many.all.log" "$rep" "$PY" bench/baseline_regex.py "$MANY"/*.txt
  # result JSON: bench-normalize vs json.load
  once bn_json "$DET" "$rep" "$BN" --format jsonl "$DET"
  once py_json "$DET" "$rep" "$PY" bench/baseline_json.py "$DET"
  # one small log: peak RSS (the time comes from the start-up measurement below)
  once bn_small "$SMALL" "$rep" "$BN" "$SMALL"
  [ -n "$WBN" ] && once bn_wheel_small "$SMALL" "$rep" "$WBN" "$SMALL"
  once py_pass "$SMALL" "$rep" "$PY" -c pass
  # the store: 10,000 runs added to a new SQLite file (one transaction)
  once store_add "$STORE_LOG" "$rep" sh -c 'rm -f "$1" && "$2" store add --store "$1" "$3"' sh "$OUT/store10k.sqlite" "$BN" "$STORE_LOG"
done

# per-invocation time: one small log vs the bare Python start-up
STARTUP="$OUT/startup.tsv"
if [ -n "$HYPERFINE" ]; then
  log "per-invocation: hyperfine, $RUNS runs each"
  WCMDS=()
  [ -n "$WBN" ] && WCMDS=("$WBN $SMALL" "$WPY -c 'import bench_normalize'")
  "$HYPERFINE" -N -i --warmup 20 --runs "$RUNS" --style none \
    --export-json "$OUT/startup.hyperfine.json" \
    "$BN $SMALL" "$PY -c pass" "$PY -S -c pass" "${WCMDS[@]}" >"$OUT/startup.hyperfine.txt" 2>&1 || log "hyperfine failed (see $OUT/startup.hyperfine.txt)"
  "$PY" - "$OUT/startup.hyperfine.json" >"$STARTUP" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
print("method\thyperfine -N (no shell), mean of %d runs" % len(r[0]["times"]))
for i, k in enumerate(["bn_small_ms", "py_pass_ms", "py_pass_S_ms", "bn_wheel_small_ms", "py_import_ms"][:len(r)]):
    print("%s\t%.3f\t%.3f" % (k, r[i]["mean"] * 1e3, r[i]["stddev"] * 1e3))
EOF
else
  log "per-invocation: hyperfine not installed (apt-get install -y hyperfine); loop of $RUNS runs each"
  loop_ms() {
    local i t0 t1
    for ((i = 0; i < 10; i++)); do "$@" >/dev/null 2>&1; done
    t0=$(date +%s%N)
    for ((i = 0; i < RUNS; i++)); do "$@" >/dev/null 2>&1; done
    t1=$(date +%s%N)
    awk -v a="$t0" -v b="$t1" -v n="$RUNS" 'BEGIN{printf "%.3f", (b-a)/n/1e6}'
  }
  {
    printf 'method\tbash loop with date +%%s%%N, mean of %s runs (includes fork/exec of bash)\n' "$RUNS"
    printf 'bn_small_ms\t%s\t\n' "$(loop_ms "$BN" "$SMALL")"
    printf 'py_pass_ms\t%s\t\n' "$(loop_ms "$PY" -c pass)"
    printf 'py_pass_S_ms\t%s\t\n' "$(loop_ms "$PY" -S -c pass)"
    if [ -n "$WBN" ]; then
      printf 'bn_wheel_small_ms\t%s\t\n' "$(loop_ms "$WBN" "$SMALL")"
      printf 'py_import_ms\t%s\t\n' "$(loop_ms "$WPY" -c 'import bench_normalize')"
    fi
  } >"$STARTUP"
fi

# ---- correctness ----------------------------------------------------------------------------
log "correctness: runs found in big.log, per-request TPOT of detailed.json"
"$BN" --format jsonl "$BIG" >"$OUT/big.bn.jsonl" 2>"$OUT/big.bn.stderr"
echo $? >"$OUT/big.bn.rc"
"$PY" bench/baseline_regex.py "$BIG" >"$OUT/big.py.jsonl" 2>/dev/null
for name in dense server; do
  "$BN" --format jsonl "$OUT/$name.log" >"$OUT/$name.bn.jsonl" 2>/dev/null
  echo $? >"$OUT/$name.bn.rc"
done
"$BN" --format jsonl "$DET" >"$OUT/detailed.bn.jsonl" 2>"$OUT/detailed.bn.stderr"
echo $? >"$OUT/detailed.bn.rc"
"$PY" bench/baseline_json.py "$DET" >"$OUT/detailed.py.json" 2>/dev/null
# the last round's store holds every run once, and adding the log again stores nothing new
"$BN" store list --store "$OUT/store10k.sqlite" --format json 2>/dev/null | "$PY" -c 'import json, sys; print(len(json.load(sys.stdin)))' >"$OUT/store10k.count"
"$BN" store add --store "$OUT/store10k.sqlite" "$STORE_LOG" 2>/dev/null | grep -c '^stored' >"$OUT/store10k.again"
# Writing big.log's report alone (its runs already in memory, one core, fastest of 5): what no way
# of reading the log can go below, with this report and this serializer.
rm -f "$OUT/serialize.tsv" "$OUT/serialize.dense.tsv"
if [ -x "$SER" ]; then
  log "timing the report's serialization alone (examples/serialize_only.rs)"
  "$SER" "$OUT/big.bn.jsonl" 5 >"$OUT/serialize.tsv" 2>"$OUT/serialize.stderr" || log "serialize_only failed (see $OUT/serialize.stderr)"
  "$SER" "$OUT/dense.bn.jsonl" 5 >"$OUT/serialize.dense.tsv" 2>"$OUT/serialize.dense.stderr" || log "serialize_only failed (see $OUT/serialize.dense.stderr)"
fi

# ---- report ---------------------------------------------------------------------------------
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
# which parsers read the banner the generator counts (the others' runs come from tables of runs)
"$BN" parsers --format json >"$OUT/parsers.json" || exit 2
"$PY" - "$OUT" "$BLOCKS" "$BUILD_NOTE" "$REV" "$DIRTY" "$PY" "$SMALL" "$LOAD_BEFORE" "$LOAD_AFTER" "$WHEEL_NOTE" <<'EOF'
import json, os, platform, sys

out, blocks, build_note, rev, dirty, py, small, load_before, load_after, wheel_note = sys.argv[1:]
blocks = int(blocks)
raw = {}
with open(os.path.join(out, "measurements.raw.tsv")) as f:
    next(f)
    for line in f:
        i, b, rep, ns, rss, code = line.rstrip("\n").split("\t")
        raw.setdefault(i, []).append((int(b), int(ns) / 1e9, int(rss), code))
M = {}
for i, xs in raw.items():
    walls = sorted(x[1] for x in xs)
    M[i] = dict(bytes=xs[0][0], reps=len(xs), wall=walls[(len(walls) - 1) // 2] if len(walls) % 2 else
                (walls[len(walls) // 2 - 1] + walls[len(walls) // 2]) / 2,
                wall_min=walls[0], rss_mb=max(x[2] for x in xs) / 1024, codes=",".join(x[3] for x in xs))
with open(os.path.join(out, "measurements.tsv"), "w") as f:
    f.write("id\tinput_bytes\treps\twall_s_median\twall_s_min\tpeak_rss_mb\texit_codes\n")
    for i, m in M.items():
        f.write(f"{i}\t{m['bytes']}\t{m['reps']}\t{m['wall']:.4f}\t{m['wall_min']:.4f}\t{m['rss_mb']:.1f}\t{m['codes']}\n")
S = {}
with open(os.path.join(out, "startup.tsv")) as f:
    for line in f:
        k, *v = line.rstrip("\n").split("\t")
        S[k] = v
startup_method = S["method"][0]
bn_small_ms = float(S["bn_small_ms"][0])
py_pass_ms = float(S["py_pass_ms"][0])
py_pass_S_ms = float(S["py_pass_S_ms"][0])
def sd(k):
    v = S[k][1] if len(S[k]) > 1 else ""
    return f" ± {float(v):.2f}" if v else ""

def mbs(m):
    return m["bytes"] / 1e6 / m["wall"] if m["wall"] > 0 else float("inf")

def fmt(x, d=2):
    return "n/a" if x is None else f"{x:,.{d}f}"

big_mb = M["bn_text"]["bytes"] / 1e6
det_mb = M["bn_json"]["bytes"] / 1e6
exp = json.load(open(os.path.join(out, "detailed.expected.json")))
meta = json.load(open(os.path.join(out, "big.meta.json")))

# -- correctness --
def read_jsonl(p):
    runs = []
    with open(p) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    runs.append(json.loads(line))
                except ValueError:
                    runs.append(None)
    return runs

bn_rc = int(open(os.path.join(out, "big.bn.rc")).read())
bn_runs = sum(1 for line in open(os.path.join(out, "big.bn.jsonl")) if line.strip())
py_runs = sum(1 for _ in open(os.path.join(out, "big.py.jsonl")))
det_rc = int(open(os.path.join(out, "detailed.bn.rc")).read())
det_runs = read_jsonl(os.path.join(out, "detailed.bn.jsonl"))
det_err = open(os.path.join(out, "detailed.bn.stderr")).read().strip().splitlines()
exp_mean = exp["tpot_ms"]["mean"]
json_supported = det_rc in (0, 1) and det_runs and det_runs[0] is not None
bn_tpot = bn_method = None
if json_supported:
    d = (det_runs[0].get("derived") or {}).get("tpot_ms") or {}
    bn_tpot, bn_method = d.get("mean"), d.get("method")
try:
    py_tpot = json.load(open(os.path.join(out, "detailed.py.json")))["tpot_ms"]["mean"]
except Exception:
    py_tpot = None

# -- table --
t_bn, t_py, t_pyn, t_grep = M["bn_text"], M["py_text"], M["py_text_naive"], M["grep_text"]
j_bn, j_py = M["bn_json"], M["py_json"]
rows = []
def row(work, cmd, m, vs_py=None, vs_grep=None, note=""):
    rows.append([work, cmd, fmt(m["bytes"] / 1e6, 1), f"{m['wall']:.3f}", fmt(mbs(m), 1), fmt(m["rss_mb"], 1),
                 fmt(vs_py, 2) + ("x" if vs_py is not None else ""),
                 fmt(vs_grep, 2) + ("x" if vs_grep is not None else ""), m["codes"], note])

w1 = f"big.log: {big_mb:.0f} MB, {blocks} blocks, {meta['noise_share'] * 100:.0f}% noise"
def verdicts(runs):
    """'N of M runs rejected (by check: count, ...)' for the runs of a JSONL output."""
    rej, by = 0, {}
    for r in runs:
        if r and r.get("verdict") == "rejected":
            rej += 1
            for c in r.get("checks") or []:
                if c.get("status") == "fail" and c.get("severity") == "error":
                    by[c["id"]] = by.get(c["id"], 0) + 1
    if not rej:
        return ""
    return f"exit 1: {rej} of {len(runs)} runs rejected (" + ", ".join(f"`{k}` {v}" for k, v in sorted(by.items(), key=lambda kv: -kv[1])) + ")"

big_runs = read_jsonl(os.path.join(out, "big.bn.jsonl"))
row(w1, "`bench-normalize --format jsonl`", t_bn, t_py["wall"] / t_bn["wall"], t_bn["wall"] / t_grep["wall"], verdicts(big_runs))
t_pipe, t_doc = M["bn_text_pipe"], M["bn_text_doc"]
row("", "`bench-normalize` (the default: one JSON document)", t_doc, t_py["wall"] / t_doc["wall"], t_doc["wall"] / t_grep["wall"], "for reference: the document is written a run at a time")
row("", "`cat big.log \\| bench-normalize --format jsonl` (a stream)", t_pipe, t_py["wall"] / t_pipe["wall"], t_pipe["wall"] / t_grep["wall"], "for reference: read as a pipe is, each run out before a read that would wait")
row("", "`python3 bench/baseline_regex.py` (binary, line by line)", t_py, 1.0, t_py["wall"] / t_grep["wall"], "the baseline")
row("", "`python3 bench/baseline_regex.py --text` (naive text mode)", t_pyn, t_py["wall"] / t_pyn["wall"], t_pyn["wall"] / t_grep["wall"], "for reference")
row("", "`grep -F -c 'Serving Benchmark Result'`", t_grep, t_py["wall"] / t_grep["wall"], 1.0, "the floor")
# The report's serialization alone (examples/serialize_only.rs), when it ran.
def read_ser(name):
    got = {}
    try:
        for line in open(os.path.join(out, name)):
            k, v = line.rstrip("\n").split("\t")
            got[k] = float(v)
    except (OSError, ValueError):
        return {}
    return got
ser = read_ser("serialize.tsv")
if "serialize_s" in ser:
    rows.append(["", "writing the report alone (`examples/serialize_only.rs`)", "", f"{ser['serialize_s']:.3f}", "", "", "", "",
                 "", f"for reference: the {int(ser['runs'])} runs ({ser['bytes'] / 1e6:.0f} MB of JSON Lines) already in memory, "
                 f"written again on one core (fastest of {int(ser['reps'])}); the Python baseline writes {os.path.getsize(os.path.join(out, 'big.py.jsonl')) / 1e6:.0f} MB"])
# issue 33's workloads: the dense log (JSON and CSV written to a file) and the server log
def read_int(name):
    try:
        return int(open(os.path.join(out, name)).read().strip())
    except (OSError, ValueError):
        return None
ser_d = read_ser("serialize.dense.tsv")
W33 = {}
for name in ("dense", "server"):
    wm = json.load(open(os.path.join(out, f"{name}.meta.json")))
    runs = read_jsonl(os.path.join(out, f"{name}.bn.jsonl"))
    W33[name] = dict(meta=wm, runs=runs, rc=int(open(os.path.join(out, f"{name}.bn.rc")).read()),
                     bn=M[f"bn_{name}"], py=M[f"py_{name}"], grep=M[f"grep_{name}"], grep_lines=read_int(f"grep.{name}.count"))
for name, what in (("dense", "the samples back to back, no noise between them"), ("server", "a server log")):
    w = W33[name]
    w_bn, w_py, w_gr = w["bn"], w["py"], w["grep"]
    row(f"{name}.log: {w_bn['bytes'] / 1e6:.0f} MB, {w['meta']['blocks']} blocks, {w['meta']['noise_share'] * 100:.0f}% of the bytes outside blocks ({what})",
        f"`bench-normalize {name}.log > report.json` (the default)", w_bn, w_py["wall"] / w_bn["wall"], w_bn["wall"] / w_gr["wall"], verdicts(w["runs"]))
    if name == "dense":
        w_csv = M["bn_dense_csv"]
        row("", "`bench-normalize --format csv dense.log > report.csv`", w_csv, w_py["wall"] / w_csv["wall"], w_csv["wall"] / w_gr["wall"], "")
        if "serialize_s" in ser_d:
            rows.append(["", "writing the report alone (`examples/serialize_only.rs`)", "", f"{ser_d['serialize_s']:.3f}", "", "", "", "",
                         "", f"for reference: the {int(ser_d['runs'])} runs ({ser_d['bytes'] / 1e6:.0f} MB of JSON Lines) already in memory, "
                         f"written again on one core (fastest of {int(ser_d['reps'])})"])
    row("", f"`python3 bench/baseline_regex.py {name}.log`", w_py, 1.0, w_py["wall"] / w_gr["wall"], "the baseline")
    row("", f"`grep -F -c 'Serving Benchmark Result' {name}.log`", w_gr, w_py["wall"] / w_gr["wall"], 1.0, "the floor")
m_bn, m_one, m_py = M["bn_many"], M["bn_many_one"], M["py_many"]
n_many = len([f for f in os.listdir(os.path.join(out, "many")) if f.endswith(".txt")])
row(f"many/: {n_many} small logs, {m_bn['bytes'] / 1e6:.0f} MB", "`bench-normalize --format jsonl many/*.txt`", m_bn, m_py["wall"] / m_bn["wall"], None,
    "files in parallel, one per core, output in input order")
row("", "`bench-normalize --format jsonl many.all.log` (the same bytes, one file)", m_one, m_py["wall"] / m_one["wall"], None, "for reference")
row("", "`python3 bench/baseline_regex.py many/*.txt`", m_py, 1.0, None, "the baseline")
w2 = f"detailed.json: {det_mb:.0f} MB, {exp['requests']} requests, {exp['chunks']} chunks"
row(w2, "`bench-normalize --format jsonl`", j_bn, j_py["wall"] / j_bn["wall"], None,
    verdicts(det_runs) if json_supported else "**cannot read the file yet** (exit %d)" % det_rc)
row("", "`python3 bench/baseline_json.py` (json.load)", j_py, 1.0, None, "the baseline")
s_add = M["store_add"]
row(f"store10k.log: {s_add['bytes'] / 1e6:.0f} MB, 10,000 blocks", "`bench-normalize store add --store new.sqlite store10k.log`", s_add, None, None,
    "read, validated and stored in one SQLite transaction")
b_small = M["bn_small"]; p_pass = M["py_pass"]
rows.append([f"one small log ({b_small['bytes'] / 1e3:.1f} KB, vllm-s2)", "`bench-normalize FILE`", fmt(b_small["bytes"] / 1e6, 3),
             f"{bn_small_ms / 1e3:.4f}", "", fmt(b_small["rss_mb"], 1), f"{py_pass_ms / bn_small_ms:.2f}x", "", b_small["codes"],
             f"{bn_small_ms:.2f}{sd('bn_small_ms')} ms per invocation"])
rows.append(["", "`python3 -c pass`", "", f"{py_pass_ms / 1e3:.4f}", "", fmt(p_pass["rss_mb"], 1), "1.00x", "", p_pass["codes"],
             f"{py_pass_ms:.2f}{sd('py_pass_ms')} ms per invocation (bare start-up)"])
rows.append(["", "`python3 -S -c pass` (no site-packages)", "", f"{py_pass_S_ms / 1e3:.4f}", "", "", f"{py_pass_ms / py_pass_S_ms:.2f}x", "", "",
             f"{py_pass_S_ms:.2f}{sd('py_pass_S_ms')} ms per invocation (start-up without `site`: no .pth files)"])
# The executable installed from the wheel (dist/), beside the release binary above.
bn_wheel_ms = float(S["bn_wheel_small_ms"][0]) if "bn_wheel_small_ms" in S else None
if bn_wheel_ms is not None and "bn_wheel_small" in M:
    b_w = M["bn_wheel_small"]
    py_import_ms = float(S["py_import_ms"][0])
    rows.append(["", "`bench-normalize FILE`, installed from the wheel", fmt(b_w["bytes"] / 1e6, 3), f"{bn_wheel_ms / 1e3:.4f}", "",
                 fmt(b_w["rss_mb"], 1), f"{py_pass_ms / bn_wheel_ms:.2f}x", "", b_w["codes"],
                 f"{bn_wheel_ms:.2f}{sd('bn_wheel_small_ms')} ms per invocation, {bn_wheel_ms / bn_small_ms:.2f}x the release binary's "
                 f"(the wheel's native file: zig, glibc 2.17; {wheel_note})"])
    rows.append(["", "`python -c 'import bench_normalize'` (the wheel's venv)", "", f"{py_import_ms / 1e3:.4f}", "", "",
                 f"{py_pass_ms / py_import_ms:.2f}x", "", "",
                 f"{py_import_ms:.2f}{sd('py_import_ms')} ms per invocation: the least a console script into the module would take"])
else:
    rows.append(["", "`bench-normalize FILE`, installed from the wheel", "", "", "", "", "", "", "", f"skipped: {wheel_note}"])

hdr = ["workload", "command", "input MB", "wall s", "MB/s", "peak RSS MB", "speed vs Python", "time vs grep", "exit", "note"]
lines = ["| " + " | ".join(hdr) + " |", "|" + "|".join("---" for _ in hdr) + "|"]
lines += ["| " + " | ".join(r) + " |" for r in rows]

# -- targets --
T = []
def target(name, ok, got, note="", counts=True):
    T.append(("PASS" if ok else "FAIL", name, got, note, counts))
sp_text = t_py["wall"] / t_bn["wall"]
need = 30 * mbs(t_py)
budget = t_py["wall"] / 30
why = [f"needs {need:,.0f} MB/s, more than `grep -F -c` ({mbs(t_grep):,.0f} MB/s) on this machine" if need > mbs(t_grep) else ""]
# Writing the report alone, shared perfectly by every core: the least wall time it can take.
cores = os.cpu_count() or 1
ser_wall = ser["serialize_s"] / cores if "serialize_s" in ser else None
if ser_wall is not None and ser_wall > budget:
    why.append(f"{budget:.3f} s of wall time is less than writing the report alone takes on all "
               f"{cores} cores ({ser['serialize_s']:.3f} s / {cores})")
target("text scanning >= 30x the Python baseline", sp_text >= 30, f"{sp_text:.2f}x", "; ".join(w for w in why if w))
vs_grep = t_bn["wall"] / t_grep["wall"]
target("text scanning no slower than 3x `grep -F -c`", vs_grep <= 3, f"{vs_grep:.2f}x grep's time",
       f"writing the report alone takes {ser_wall:.3f} s of the {3 * t_grep['wall']:.3f} s on {cores} cores" if ser_wall is not None else "")
target(f"peak RSS < 32 MB on the {big_mb:.0f} MB log", t_bn["rss_mb"] < 32, f"{t_bn['rss_mb']:.1f} MB")
first_err = (det_err[0] if det_err else "")
first_err = first_err if len(first_err) <= 100 else first_err[:100] + "..."
unsupported = "" if json_supported else f"bench-normalize cannot read the result JSON yet (exit {det_rc}: `{first_err}`)"
sp_json = j_py["wall"] / j_bn["wall"]
target(f"{exp['requests'] // 1000}k-request JSON >= 10x Python", json_supported and sp_json >= 10,
       f"{sp_json:.2f}x" if json_supported else "n/a", unsupported)
target(f"JSON peak RSS < 2x the file size ({2 * det_mb:.0f} MB)", json_supported and j_bn["rss_mb"] < 2 * det_mb,
       f"{j_bn['rss_mb']:.1f} MB = {j_bn['rss_mb'] / det_mb:.2f}x the file" if json_supported else "n/a", unsupported)
target("one small log in under 1/3 of Python's bare start-up (`python3 -c pass`)", bn_small_ms < py_pass_ms / 3,
       f"{bn_small_ms:.2f} ms vs {py_pass_ms:.2f} / 3 = {py_pass_ms / 3:.2f} ms",
       "`python3 -c pass` runs site-packages' .pth files; see the `-S` line" if py_pass_ms > 2 * py_pass_S_ms else "")
target("(info, stricter) the same against `python3 -S -c pass`", bn_small_ms < py_pass_S_ms / 3,
       f"{bn_small_ms:.2f} ms vs {py_pass_S_ms:.2f} / 3 = {py_pass_S_ms / 3:.2f} ms",
       "start-up without site-packages (less machine-dependent); not in the exit status", counts=False)
if bn_wheel_ms is not None:
    target("(info) the wheel's executable starts within 25% of the release binary", bn_wheel_ms <= 1.25 * bn_small_ms,
           f"{bn_wheel_ms:.2f} ms vs {bn_small_ms:.2f} ms = {bn_wheel_ms / bn_small_ms:.2f}x",
           "not in the exit status (one small log: start-up and a few ms of work)", counts=False)
# A block is one run. The log's vllm-rs sweep logs also print a Sweep Summary table, whose rows
# are runs of their own (another banner): counted apart.
banner_parsers = {p["id"] for p in json.load(open(os.path.join(out, "parsers.json")))
                  if any("Serving Benchmark Result" in m for m in p.get("markers") or [])}
block_runs = sum(1 for r in big_runs if r and r["source"]["parser"] in banner_parsers)
target("bench-normalize finds every block of big.log", block_runs == blocks and bn_rc in (0, 1),
       f"{block_runs} runs of {blocks} blocks, exit {bn_rc}",
       f"baseline_regex.py: {py_runs}" + (f"; and {bn_runs - block_runs} runs from Sweep Summary tables" if bn_runs > block_runs else ""))
# issue 33's targets
wd, sv = W33["dense"], W33["server"]
r = wd["bn"]["wall"] / wd["grep"]["wall"]
target("dense log: the JSON report written to a file <= 5x `grep -F -c`", r <= 5, f"{r:.2f}x grep's time",
       f"writing its {ser_d['bytes'] / 1e6:.0f} MB alone takes {ser_d['serialize_s'] / cores:.3f} s on {cores} cores, "
       f"of a budget of {5 * wd['grep']['wall']:.3f} s" if "serialize_s" in ser_d else "")
r = M["bn_dense_csv"]["wall"] / wd["grep"]["wall"]
target("dense log: `--format csv` <= 3x `grep -F -c`", r <= 3, f"{r:.2f}x grep's time")
r = wd["py"]["wall"] / wd["bn"]["wall"]
target("dense log: >= 5x the Python baseline", r >= 5, f"{r:.2f}x")
r = sv["bn"]["wall"] / sv["grep"]["wall"]
target("server log: no slower than `grep -F -c`", r <= 1, f"{r:.2f}x grep's time")
r = sv["py"]["wall"] / sv["bn"]["wall"]
target("server log: >= 40x the Python baseline", r >= 40, f"{r:.2f}x")
text_ids = ["bn_text", "bn_text_doc", "bn_dense", "bn_dense_csv", "bn_server", "bn_many_one"]
top = max(text_ids, key=lambda i: M[i]["rss_mb"])
target("peak RSS < 32 MB on every text input", M[top]["rss_mb"] < 32, f"{M[top]['rss_mb']:.1f} MB at most (`{top}`)")
for name in ("dense", "server"):
    w = W33[name]
    found = sum(1 for x in w["runs"] if x and x["source"]["parser"] in banner_parsers)
    blocks_n = w["meta"]["blocks"]
    target(f"bench-normalize finds every block of {name}.log", found == blocks_n and w["rc"] in (0, 1) and w["grep_lines"] == blocks_n,
           f"{found} runs of {blocks_n} blocks, exit {w['rc']}; grep {w['grep_lines']} lines",
           verdicts(w["runs"]))
if json_supported and isinstance(bn_tpot, (int, float)):
    rel = abs(bn_tpot - exp_mean) / exp_mean
    target("per-request TPOT of detailed.json within 0.1%", rel <= 0.001 and bn_method == "per-request",
           f"{bn_tpot} ms ({bn_method}) vs expected {exp_mean:.6g} ms: {rel * 100:.4f}%")
else:
    target("per-request TPOT of detailed.json within 0.1%", False,
           "n/a" if not json_supported else f"derived.tpot_ms.mean = {bn_tpot!r}", unsupported)
py_ok = py_tpot is not None and abs(py_tpot - exp_mean) / exp_mean <= 1e-9
grep_count = read_int("grep.count")
target("(harness) baselines agree with the generator", py_ok and py_runs == blocks and grep_count == blocks,
       f"baseline_json {py_tpot if py_tpot is None else round(py_tpot, 6)} ms, baseline_regex {py_runs} blocks, "
       f"grep {grep_count} lines")

stored, again = read_int("store10k.count"), read_int("store10k.again")
target("10,000 runs added to a SQLite store in seconds (< 10 s), each once", s_add["wall"] < 10 and stored == 10000 and again == 0
       and set(s_add["codes"].split(",")) == {"0"},
       f"{s_add['wall']:.2f} s; {stored} rows; {again} stored by a second add")

tl = ["| status | target | measured | note |", "|---|---|---|---|"]
tl += [f"| {s} | {n} | {g} | {x} |" for s, n, g, x, _ in T]

cpu = "?"
try:
    for l in open("/proc/cpuinfo"):
        if l.startswith("model name"):
            cpu = l.split(":", 1)[1].strip(); break
except OSError:
    pass
env = (f"bench-normalize {rev}{' + uncommitted changes in src/crates/parsers' if int(dirty) else ''} ({build_note}); "
       f"{platform.python_implementation()} {platform.python_version()} ({py}); {os.cpu_count()} CPUs, {cpu}; "
       f"wall = median of {t_bn['reps']} interleaved runs, page cache warm; per-invocation: {startup_method}; "
       f"load average before/after: {load_before} / {load_after}")
text = "\n".join(["", "### Results", "", env, ""] + lines + [""] + tl + [""])
print(text)
with open(os.path.join(out, "results.md"), "w") as f:
    f.write(text)
sys.exit(0 if all(s == "PASS" for s, _, _, _, c in T if c) else 1)
EOF
status=$?
log "table saved to $OUT/results.md"
exit $status
