#!/usr/bin/env python3
"""Seed fuzz/corpus/<target>/ from the repository's samples (fuzz/corpus is git-ignored).

    python3 fuzz/seed_corpus.py [path/to/bench-normalize]

normalize: every text log in samples/ (with the mode byte 0x00: read as it is), the JSON result
files with their per-request arrays cut to a few entries (mode 0x00, and mode 0x01 with the
leading `{"` removed, which the target puts back), and canonical reports.
check: canonical reports written by the binary (when one is given or found in target/), dstack
preset reports, and a few result files (which `check` must refuse).
"""
import json, os, subprocess, sys, hashlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(ROOT, "samples")
CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def put(target, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def shrink(v, n=3):
    """Cut every list to n entries, recursively (the per-request arrays make files large)."""
    if isinstance(v, list):
        return [shrink(x, n) for x in v[:n]]
    if isinstance(v, dict):
        return {k: shrink(x, n) for k, x in v.items()}
    return v


def files(sub, suffixes):
    d = os.path.join(SAMPLES, sub)
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(suffixes))


texts = files("captured", (".stdout.txt",)) + files("versions", (".stdout.txt",)) + files("public", (".txt",)) + files("rendered", (".txt",))
# The peers' console logs and tables, and AIPerf's CSV export (read as text).
texts += files("peers", (".txt", ".csv"))
if os.path.isdir(os.path.join(SAMPLES, "noisy")):
    texts += files("noisy", (".txt", ".md", ".jsonl", ".log", ".yaml"))
for p in texts:
    put("normalize", b"\x00" + open(p, "rb").read())

results = files("captured", (".result.json", ".result.jsonl")) + files("versions", (".result.json", ".result.jsonl"))
small_results = []
for p in results:
    raw = open(p, "rb").read()
    docs = []
    for line in raw.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            docs.append(json.dumps(shrink(json.loads(line)), allow_nan=True).encode())
        except ValueError:
            pass
    if p.endswith(".jsonl"):
        data = b"\n".join(docs[:3]) + b"\n"
    else:
        data = docs[0] if docs else raw[:4096]
    small_results.append(data)
    put("normalize", b"\x00" + data)
    if data.startswith(b'{"'):
        put("normalize", b"\x01" + data[2:])

# Canonical reports, from the binary.
binary = sys.argv[1] if len(sys.argv) > 1 else None
if binary is None:
    for cand in ("target/release/bench-normalize", "target/debug/bench-normalize"):
        if os.path.exists(os.path.join(ROOT, cand)):
            binary = os.path.join(ROOT, cand)
            break
reports = []
if binary:
    for p in texts[::3] + results[::4]:
        out = subprocess.run([binary, p], capture_output=True).stdout
        if out.strip().startswith(b"{"):
            try:
                reports.append(json.dumps(shrink(json.loads(out), 6)).encode())
            except ValueError:
                pass
else:
    print("no bench-normalize binary found: no canonical reports in the corpus", file=sys.stderr)

dstack = {
    "tool": "python -m sglang.bench_serving",
    "tool_version": "0.5.5.post1",
    "command": "python -m sglang.bench_serving --backend sglang-oai --max-concurrency 4 --num-prompts 32",
    "workload": {"api": "completions", "dataset": "random", "num_requests": 32, "input_tokens": 131072, "output_tokens": 512, "concurrency": 4},
    "metrics": {
        "successful_requests": 32, "failed_requests": 0, "duration_seconds": 96.28,
        "total_input_tokens": 4194304, "total_output_tokens": 16384,
        "output_tok_per_s": 170.17, "per_user_tok_per_s": 7.29,
        "ttft_ms": {"mean": 210.0, "p50": 205.3, "p99": 260.8},
        "tpot_ms": {"mean": 137.18, "p50": 55.34, "p99": 1160.43},
    },
}
variants = [dstack]
d2 = json.loads(json.dumps(dstack)); d2["metrics"]["tpot_ms"] = None; variants.append(d2)
d3 = json.loads(json.dumps(dstack)); d3["metrics"]["e2e_ms"] = {"mean": 6682.24, "p50": 6600.0, "p99": 7000.5}; variants.append(d3)
for v in variants:
    reports.append(json.dumps(v).encode())
    reports.append(json.dumps(v, indent=2).encode())

for r in reports:
    put("check", r)
    put("normalize", b"\x00" + r)
    if r.startswith(b'{"'):
        put("normalize", b"\x01" + r[2:])
for r in small_results[::5]:
    put("check", r)
for p in texts[::6]:
    put("check", open(p, "rb").read())

for t in ("normalize", "check"):
    d = os.path.join(CORPUS, t)
    print(t, len(os.listdir(d)), "files")
