"""What the capture scripts share: the emulator's scenarios, waiting for it, and the summary of
its request log that becomes a sample's truth file (`measured_by_emulator`).

Imported by capture_evalscope.py and capture_genaiperf.py (run from this folder).
"""
import math
import statistics
import subprocess
import time
import urllib.request

SCENARIOS = {
    "s1": dict(desc="k=1 (no spec), TPOT 20 ms, concurrency 4",
               tpot_ms=20.0, k=1, ttft_ms=30.0, prefill_ms_per_token=0.1,
               concurrency=4, num_prompts=16, input_len=256, output_len=128),
    "s2": dict(desc="k=10 spec-like, TPOT 12.8 ms (78 tok/s/user), concurrency 4, out 512",
               tpot_ms=12.8, k=10, ttft_ms=30.0, prefill_ms_per_token=0.1,
               concurrency=4, num_prompts=16, input_len=1024, output_len=512),
}


def neutral(s):
    return s.replace("/tmp/", "/opt/")


def pip_version(py, pkg):
    out = subprocess.run([py, "-c", f"import importlib.metadata as m; print(m.version('{pkg}'))"],
                         capture_output=True, text=True)
    return out.stdout.strip()


def wait_ready(port, proc, timeout=30):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError("emulator exited early")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                if r.status == 200:
                    return
        except Exception:
            time.sleep(0.2)
    raise TimeoutError("emulator not ready")


def mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def summarize(recs):
    ok = [r for r in recs if r.get("status") == "ok"]
    sizes = [s for r in ok for s in r["chunk_sizes"][1:]]
    return {
        "requests_logged": len(recs),
        "requests_ok": len(ok),
        "requests_http500": sum(1 for r in recs if r.get("status") == "http500"),
        "mean_queue_ms": mean(r["queue_ms"] for r in ok),
        "mean_ttft_ms": mean(r["ttft_ms"] for r in ok),
        "mean_decode_ms": mean(r["decode_ms"] for r in ok),
        "mean_e2e_ms": mean(r["e2e_ms"] for r in ok),
        "mean_done_ms": mean(r.get("done_ms") for r in ok),
        "mean_tpot_ms": mean(r["tpot_ms"] for r in ok),
        "mean_chunk_gap_ms": mean(r["chunk_gap_ms"] for r in ok),
        "mean_tokens_per_decode_chunk": mean(sizes),
        "mean_chunks_per_request": mean(r["chunks_sent"] for r in ok),
        "total_output_tokens_sent": sum(r["tokens_sent"] for r in ok),
        "total_prompt_tokens": sum(r["prompt_tokens"] for r in ok),
        "mean_prompt_tokens": mean(r["prompt_tokens"] for r in ok),
        "max_tokens_requested": sorted({r.get("max_tokens") for r in ok}),
        "span_first_arrival_to_last_chunk_s": (
            max(r["arrival_unix"] + r["e2e_ms"] / 1000 for r in ok) - min(r["arrival_unix"] for r in ok)),
    }


def scenario_truth(sc, m):
    """The truth a scenario sets (the emulator's parameters and the figures they imply), given
    the emulator's summary `m` of the run's requests: the `true_*` keys of a truth file."""
    n_dec_chunks = math.ceil((sc["output_len"] - 1) / sc["k"])
    return {
        "emulator_params": {k: v for k, v in sc.items() if k != "desc"},
        "true_tpot_ms": sc["tpot_ms"],
        "true_ttft_ms": round(sc["ttft_ms"] + sc["prefill_ms_per_token"] * m["mean_prompt_tokens"], 3),
        "true_ttft_note": "server-side prefill as configured: ttft_ms + prefill_ms_per_token * prompt tokens (mean prompt tokens the emulator counted; no server queueing: slots >= concurrency)",
        "tokens_per_chunk": sc["k"],
        "first_chunk_tokens": 1,
        "true_chunk_interval_ms": round(sc["k"] * sc["tpot_ms"], 3),
        "true_mean_chunk_gap_ms": round((sc["output_len"] - 1) * sc["tpot_ms"] / n_dec_chunks, 3),
        "true_mean_chunk_gap_note": "(output_len-1)*tpot / number of decode chunks: the last chunk is shorter when k does not divide output_len-1",
        "true_output_tok_per_s_per_user": round(1000.0 / sc["tpot_ms"], 3),
        "concurrency": sc["concurrency"],
        "num_prompts": sc["num_prompts"],
        "input_len": sc["input_len"],
        "output_len": sc["output_len"],
        "expected_true_e2e_ms": round(sc["ttft_ms"] + sc["prefill_ms_per_token"] * sc["input_len"]
                                      + (sc["output_len"] - 1) * sc["tpot_ms"], 3),
    }
