#!/usr/bin/env python3
"""The straightforward Python alternative to bench-normalize on text logs (the baseline of
bench/run.sh): find every block between the `Serving Benchmark Result` banner and its closing
`=====` line, read its `Label: value` rows into a dict, derive
TPOT = (mean E2E - mean TTFT) / (total generated tokens / successful requests - 1) where an E2E
row exists, and print one JSON line per block.

    python3 bench/baseline_regex.py [--text] LOG [LOG...]

Written to be fair, not a straw man: the file is read line by line in binary mode (so tqdm's
'\\r' updates do not become lines and nothing outside a block is decoded), the banner test is a
plain substring test, the regexes are compiled once, and only block lines are decoded and matched.
--text reads the file the way most scripts do (`for line in open(path)`: decoded text with
universal newlines, so every '\r' ends a line too), for reference.
"""

import json
import re
import sys

BANNER = b"Serving Benchmark Result"
END_RE = re.compile(r"^\s*=+\s*$")
SECTION_RE = re.compile(r"^\s*-+\s*([^-].*?)\s*-+\s*$")
ROW_RE = re.compile(r"^\s*([^:]+?)\s*:\s*(\S.*?)\s*$")
NUM_RE = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")

E2E_LABELS = ("Mean E2EL (ms)", "Mean E2E Latency (ms)")
TTFT_LABELS = ("Mean TTFT (ms)",)
TOKENS_LABELS = ("Total generated tokens",)
REQUESTS_LABELS = ("Successful requests", "Completed requests")


def number(rows, labels):
    for label in labels:
        v = rows.get(label)
        if v is not None and NUM_RE.match(v):
            return float(v)
    return None


def tpot_ms(rows):
    e2e = number(rows, E2E_LABELS)
    ttft = number(rows, TTFT_LABELS)
    n_out = number(rows, TOKENS_LABELS)
    reqs = number(rows, REQUESTS_LABELS)
    if None in (e2e, ttft, n_out, reqs) or reqs <= 0:
        return None
    per_req = n_out / reqs
    if per_req <= 1:
        return None
    return (e2e - ttft) / (per_req - 1)


def emit(out, path, block, first_line, last_line, rows, complete):
    t = tpot_ms(rows)
    out.write(json.dumps({
        "input": path,
        "block": block,
        "first_line": first_line,
        "last_line": last_line,
        "complete": complete,
        "rows": rows,
        "tpot_ms": t,
        "decode_tok_per_s": (1000.0 / t) if t else None,
    }))
    out.write("\n")


def parse(path, out, text=False):
    blocks = 0
    banner = BANNER.decode() if text else BANNER
    f = open(path, "r", encoding="utf-8", errors="replace") if text else open(path, "rb")
    with f:
        rows = None
        section = ""
        first = 0
        lineno = 0
        for lineno, raw in enumerate(f, 1):
            if rows is None:
                if banner in raw:
                    rows, section, first = {}, "", lineno
                continue
            line = raw if text else raw.decode("utf-8", "replace")
            if banner in raw:  # a new banner before the closing line: the block was cut
                blocks += 1
                emit(out, path, blocks, first, lineno - 1, rows, False)
                rows, section, first = {}, "", lineno
                continue
            if END_RE.match(line):
                blocks += 1
                emit(out, path, blocks, first, lineno, rows, True)
                rows = None
                continue
            m = SECTION_RE.match(line)
            if m:
                section = m.group(1)
                continue
            m = ROW_RE.match(line)
            if m:
                label, value = m.group(1), m.group(2)
                key = label if label not in rows else f"{section}/{label}"
                rows[key] = value
        if rows is not None:
            blocks += 1
            emit(out, path, blocks, first, lineno, rows, False)
    return blocks


def main():
    args = sys.argv[1:]
    text = "--text" in args
    paths = [a for a in args if a != "--text"]
    if not paths:
        sys.exit(__doc__)
    total = 0
    out = sys.stdout
    for path in paths:
        total += parse(path, out, text)
    print(f"baseline_regex: {total} blocks", file=sys.stderr)
    return 0 if total else 3


if __name__ == "__main__":
    sys.exit(main())
