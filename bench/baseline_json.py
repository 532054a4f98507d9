#!/usr/bin/env python3
"""The straightforward Python alternative to bench-normalize on a vLLM `--save-detailed` result
JSON (the baseline of bench/run.sh): json.load the file and compute the per-request TPOT,
(latency_i - ttft_i) / (output_len_i - 1) for every successful request with more than one output
token, then its request-weighted mean, p50 and p99 (numpy's linear interpolation) in ms.

    python3 bench/baseline_json.py RESULT.json
"""

import json
import math
import sys


def percentile(sorted_xs, p):
    k = (len(sorted_xs) - 1) * p / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (k - lo)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], "rb") as f:
        d = json.load(f)
    lat, ttft, n = d["latencies"], d["ttfts"], d["output_lens"]
    errors = d.get("errors") or [""] * len(n)
    tpots = [(lat[i] - ttft[i]) / (n[i] - 1) * 1000.0
             for i in range(len(n)) if n[i] > 1 and not errors[i]]
    if not tpots:
        print(json.dumps({"requests": len(n), "tpot_ms": None}))
        return 3
    s = sorted(tpots)
    print(json.dumps({
        "requests": len(n),
        "used": len(tpots),
        "tpot_ms": {"mean": math.fsum(tpots) / len(tpots), "p50": percentile(s, 50), "p99": percentile(s, 99)},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
