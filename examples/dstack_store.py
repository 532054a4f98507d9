"""A dstack-style server validating an agent's benchmark before storing it.

dstack's server stores the `benchmark` / `metrics` object an agent reports and trusts its
`tpot_ms`. Checked first with `bench_normalize.check`, a document whose figures contradict each
other is refused with the rule that caught it, and what is stored is the derived TPOT, not the
claim. Tested by tests/python/test_examples.py.
"""

from __future__ import annotations

from typing import Any, Dict

import bench_normalize as bn


class Refused(ValueError):
    """The document was not stored: why, and the CLI's exit code for it."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


def store_benchmark(document: Dict[str, Any], store: Dict[str, Any], key: str) -> Dict[str, Any]:
    """Validate an agent's `PresetBenchmark` (or its `metrics`) and store it under `key`."""
    try:
        runs = bn.check(document, name=key)
    except bn.BenchNormalizeError as e:
        raise Refused(f"unreadable benchmark ({e.code}): {e.message}", e.exit_code) from e
    for run in runs:
        if run["verdict"] != "accepted":
            failed = [f"{c['id']}: {c['message']}" for c in run["checks"] if c["status"] == "fail"]
            code = 1 if run["verdict"] == "rejected" else 3
            raise Refused(f"run {run['source']['block']} {run['verdict']}: " + "; ".join(failed), code)
    record = {
        "document": document,
        # The figure derived from E2E latency, TTFT and token counts, checked against the totals.
        "tpot_ms": [run["derived"]["tpot_ms"]["mean"] for run in runs],
        "checks": [[c["id"] for c in run["checks"] if c["status"] == "pass"] for run in runs],
    }
    store[key] = record
    return record
