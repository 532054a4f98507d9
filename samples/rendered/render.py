#!/usr/bin/env python3
"""Render benchmark-output samples for the variants the captured samples lack.

Every file written here is *rendered*, not captured: a small discrete-event
simulation produces per-request timings (TTFT, streamed chunks, end-to-end
latency, client queueing), the statistics are computed the way the named tool
version computes them (numpy-style mean / median / linear-interpolation
percentiles over the same lists), and the result is printed with that
version's own format strings ("{:<40} {:<10}", "{:<40} {:<10.2f}", 50-wide
centred headers, ...).  See README.md beside this file for the source lines
each renderer follows.  Python 3 standard library only; deterministic (fixed
seeds).  Run:  python3 render.py   (writes *.txt, llmperf-summary.json and expected.json here).
"""

import heapq
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------
# numpy-equivalent statistics (np.mean / np.median / np.percentile(linear))
# --------------------------------------------------------------------------

def np_mean(xs):
    xs = list(xs) or [0.0]
    return math.fsum(xs) / len(xs)


def np_percentile(xs, p):
    xs = sorted(xs) or [0.0]
    pos = (len(xs) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def np_median(xs):
    return np_percentile(xs, 50)


def np_std(xs):
    xs = list(xs) or [0.0]
    m = np_mean(xs)
    return math.sqrt(math.fsum((x - m) ** 2 for x in xs) / len(xs))


# --------------------------------------------------------------------------
# Formatting primitives (identical to the tools' format strings)
# --------------------------------------------------------------------------

TITLE = "{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=50, c="=")
CLOSE = "=" * 50


def row(label, value):
    return "{:<40} {:<10}".format(label, value)


def rowf(label, value):
    return "{:<40} {:<10.2f}".format(label, value)


def hdr(name):
    return "{s:{c}^{n}}".format(s=name, n=50, c="-")


def p_word(p):
    return str(int(p)) if int(p) == p else str(p)


def fmt_interval(t):
    """tqdm.format_interval"""
    mins, s = divmod(int(t), 60)
    h, m = divmod(mins, 60)
    if h:
        return "{0:d}:{1:02d}:{2:02d}".format(h, m, s)
    return "{0:02d}:{1:02d}".format(m, s)


def tqdm_bar(frac):
    chars = " " + "".join(chr(0x258F - i) for i in range(7)) + "\u2588"
    # chars = ' ▏▎▍▌▋▊▉█'
    nsyms = len(chars) - 1
    full, rem = divmod(int(frac * 10 * nsyms), nsyms)
    bar = chars[-1] * full
    if full < 10:
        bar += chars[rem] if rem else ""
    return bar.ljust(10)


def tqdm_line(total, done_times, glued=None):
    """A tqdm progress bar as it lands in a 2>&1 capture: \\r-separated states.

    glued: a stdout line printed after the bar was created (unbuffered
    capture): it lands right after the bar's initial 0% state."""
    done_times = sorted(done_times)
    states = ["  0%|          | 0/{} [00:00<?, ?it/s]".format(total)]
    marks = sorted({max(1, round(total * q)) for q in (0.05, 0.3, 0.55, 0.8)} | {total})
    for n in marks:
        el = done_times[n - 1]
        rate = n / el if el > 0 else 0.0
        remaining = (total - n) / rate if rate else 0.0
        rate_fmt = ("{:5.2f}it/s".format(rate) if rate >= 1 else
                    "{:5.2f}s/it".format(1 / rate))
        states.append("{:3.0f}%|{}| {}/{} [{}<{}, {}]".format(
            100.0 * n / total, tqdm_bar(n / total), n, total,
            fmt_interval(el), fmt_interval(remaining), rate_fmt))
    if glued is not None:
        return "\r" + states[0] + glued + "\n\r" + "\r".join(states[1:])
    return "\r" + "\r".join(states)


# --------------------------------------------------------------------------
# Simulation
# --------------------------------------------------------------------------

class Req:
    """One simulated request; all times in seconds.

    start:   when the request function took its start timestamp (after the
             client concurrency slot was acquired), relative to the
             benchmark start.
    arrival: when the request was handed to the client (queue time =
             start - arrival).
    ttft:    first token-bearing chunk, relative to start.
    gaps:    time between consecutive token-bearing chunks.
    toks:    tokens carried by each chunk (first chunk first).
    tail:    time from the last token-bearing chunk to the last line the
             client reads ([DONE], or a usage-only chunk).
    """

    def __init__(self, prompt_len, ttft, gaps, toks, tail=0.0):
        self.prompt_len = prompt_len
        self.ttft = ttft
        self.gaps = gaps
        self.toks = toks
        self.tail = tail
        self.n = sum(toks)
        self.arrival = 0.0
        self.start = 0.0
        self.extra = {}

    @property
    def lat_last(self):
        return self.ttft + math.fsum(self.gaps)

    @property
    def lat_done(self):
        return self.lat_last + self.tail

    def itl_chunks(self):
        return list(self.gaps)

    def itl_split(self):
        out = []
        for g, m in zip(self.gaps, self.toks[1:]):
            out.extend([g / m] * m)
        return out


def decode_plain(rng, n, t_ms, jitter=0.03, req_jitter=0.006):
    """One token per chunk; per-gap noise, per-request rate factor <= 1%."""
    f = 1.0 + rng.uniform(-req_jitter, req_jitter)
    gaps = [t_ms / 1000.0 * f * max(0.5, 1.0 + rng.gauss(0.0, jitter))
            for _ in range(n - 1)]
    return gaps, [1] * n


def decode_spec(rng, n, step_ms, pos_rates, jitter=0.04, req_jitter=0.006):
    """Speculative decoding: each verification step emits 1 + a tokens, a =
    number of leading draft positions accepted; P(a >= i+1) = pos_rates[i]."""
    f = 1.0 + rng.uniform(-req_jitter, req_jitter)
    gaps, toks, accepted = [], [1], []
    left = n - 1
    while left > 0:
        u = rng.random()
        a = sum(1 for r in pos_rates if u < r)
        m = min(1 + a, left)
        accepted.append(m - 1)
        gaps.append(step_ms / 1000.0 * f * max(0.5, 1.0 + rng.gauss(0.0, jitter)))
        toks.append(m)
        left -= m
    return gaps, toks, accepted


def schedule(reqs, arrivals, conc, dispatch=0.0002, rng=None):
    """Client-side semaphore: FIFO, `conc` slots (None = unlimited)."""
    free = [0.0] * conc if conc else None
    for r, a in zip(reqs, arrivals):
        r.arrival = a
        if free is not None:
            slot = heapq.heappop(free)
            r.start = max(a, slot) + dispatch * (1 + (rng.random() if rng else 0))
            heapq.heappush(free, r.start + r.lat_done)
        else:
            r.start = a + dispatch * (1 + (rng.random() if rng else 0))


def poisson_arrivals(rng, count, rate):
    t, out = 0.0, []
    for _ in range(count):
        out.append(t)
        t += rng.expovariate(rate)
    return out


def burst_arrivals(count, step=0.00004):
    return [i * step for i in range(count)]


def peak_buckets(reqs, itl_of, lat_of):
    """vLLM >= 0.11 / SGLang >= 0.5.6 peak output tokens/s and peak
    concurrent requests: 1-s buckets from the earliest start; one event at
    start+ttft and one per recorded ITL entry."""
    t0 = min(r.start for r in reqs)
    t1 = max(r.start + lat_of(r) for r in reqs)
    nb = int(math.ceil(t1 - t0)) + 1
    tok = [0] * nb
    conc = [0] * nb
    for r in reqs:
        t = r.start + r.ttft
        times = [t]
        for g in itl_of(r):
            t += g
            times.append(t)
        for tt in times:
            b = int(tt - t0)
            if 0 <= b < nb:
                tok[b] += 1
        for b in range(int(r.start - t0), min(int(r.start + lat_of(r) - t0) + 1, nb)):
            conc[b] += 1
    return float(max(tok)), int(max(conc))


def stats_ms(xs, percentiles=()):
    return {
        "mean": np_mean(xs) * 1000,
        "median": np_median(xs) * 1000,
        "std": np_std(xs) * 1000,
        "p": [(p, np_percentile(xs, p) * 1000) for p in percentiles],
    }


def tpots_of(reqs, lat_of, n_of=lambda r: r.n):
    return [(lat_of(r) - r.ttft) / (n_of(r) - 1) for r in reqs if n_of(r) > 1]


def summary(reqs, lat_of, itl_of, D, t_ms, k, extra_notes=""):
    """Ground truth for one rendered block.

    true_tpot_ms:   the simulated decode time per token, i.e. the mean over
                    requests of (last token chunk - first chunk) / (n - 1),
                    without any [DONE]/usage tail; this is what a correct
                    derivation should recover.
    design_tpot_ms: the simulation parameter it was drawn around.
    tool_tpot_ms:   the tool's own request-weighted mean TPOT, with its own
                    latency definition (what 'Mean TPOT (ms):' prints, or
                    would print, before rounding)."""
    tp = tpots_of(reqs, lat_of)
    true = tpots_of(reqs, lambda r: r.lat_last)
    return {
        "true_tpot_ms": round(np_mean(true) * 1000, 3),
        "design_tpot_ms": t_ms,
        "tokens_per_chunk": k,
        "tool_tpot_ms": round(np_mean(tp) * 1000, 4),
        "simulated_mean_ttft_ms": round(np_mean([r.ttft for r in reqs]) * 1000, 4),
        "simulated_mean_e2e_ms": round(np_mean([lat_of(r) for r in reqs]) * 1000, 4),
        "simulated_mean_itl_ms": round(np_mean([g for r in reqs for g in itl_of(r)]) * 1000, 4)
        if itl_of else None,
        "duration_s": round(D, 6),
        "notes": extra_notes,
    }


# --------------------------------------------------------------------------
# helpers shared by the vLLM renderers
# --------------------------------------------------------------------------

def vllm_sections(out, stats, selected, percentiles, attrs=(
        ("ttft", "TTFT", "Time to First Token"),
        ("tpot", "TPOT", "Time per Output Token (excl. 1st token)"),
        ("itl", "ITL", "Inter-token Latency"),
        ("e2el", "E2EL", "End-to-end Latency"))):
    """process_one_metric(): header, Mean, Median, P{p} for each p."""
    for attr, name, header in attrs:
        if attr not in selected or attr not in stats:
            continue
        s = stats[attr]
        out.append(hdr(header))
        out.append(rowf("Mean {} (ms):".format(name), s["mean"]))
        out.append(rowf("Median {} (ms):".format(name), s["median"]))
        for p, v in s["p"]:
            out.append(rowf("P{} {} (ms):".format(p_word(p), name), v))


def namespace(base, **overrides):
    """repr(argparse.Namespace) with the version's argument order."""
    unknown = set(overrides) - {k for k, _ in base}
    assert not unknown, unknown
    return "Namespace(" + ", ".join(
        "{}={!r}".format(k, overrides.get(k, v)) for k, v in base) + ")"


INF = float("inf")

# SGLang argument order and defaults, read from the wheels' add_argument calls.
SG_NS_0122 = [
    ("backend", "sglang"), ("base_url", None), ("host", "0.0.0.0"), ("port", None),
    ("dataset_name", "sharegpt"), ("dataset_path", ""), ("model", None), ("tokenizer", None),
    ("num_prompts", 1000), ("sharegpt_output_len", None), ("random_input_len", 1024),
    ("random_output_len", 128), ("random_range_ratio", 1.0), ("request_rate", INF),
    ("seed", 0), ("disable_tqdm", False)]
SG_NS_0124 = SG_NS_0122 + [
    ("multi", False), ("request_rate_range", "2,34,2"), ("output_file", None),
    ("disable_stream", False)]
SG_NS_036 = [
    ("backend", "sglang"), ("base_url", None), ("host", "0.0.0.0"), ("port", None),
    ("dataset_name", "sharegpt"), ("dataset_path", ""), ("model", None), ("tokenizer", None),
    ("num_prompts", 1000), ("sharegpt_output_len", None), ("random_input_len", 1024),
    ("random_output_len", 1024), ("random_range_ratio", 0.0), ("request_rate", INF),
    ("seed", 1), ("multi", False), ("request_rate_range", "2,34,2"), ("output_file", None),
    ("disable_tqdm", False), ("disable_stream", False), ("disable_ignore_eos", False),
    ("extra_request_body", None), ("gen_num_groups", 64), ("gen_prompts_per_group", 16),
    ("gen_system_prompt_len", 2048), ("gen_question_len", 128), ("gen_output_len", 256),
    ("generated_input_save_path", None), ("generated_input_path", None), ("profile", False)]
_GSP = [("gsp_num_groups", 64), ("gsp_prompts_per_group", 16),
        ("gsp_system_prompt_len", 2048), ("gsp_question_len", 128), ("gsp_output_len", 256)]
SG_NS_0417 = [
    ("backend", "sglang"), ("base_url", None), ("host", "0.0.0.0"), ("port", None),
    ("dataset_name", "sharegpt"), ("dataset_path", ""), ("model", None), ("tokenizer", None),
    ("num_prompts", 1000), ("sharegpt_output_len", None), ("sharegpt_context_len", None),
    ("random_input_len", 1024), ("random_output_len", 1024), ("random_range_ratio", 0.0),
    ("request_rate", INF), ("max_concurrency", None), ("seed", 1), ("multi", False),
    ("request_rate_range", "2,34,2"), ("output_file", None), ("disable_tqdm", False),
    ("disable_stream", False), ("disable_ignore_eos", False), ("return_logprob", False),
    ("extra_request_body", None), ("profile", False), ("lora_name", None)] + _GSP
SG_NS_042 = [
    ("backend", "sglang"), ("base_url", None), ("host", "0.0.0.0"), ("port", None),
    ("dataset_name", "sharegpt"), ("dataset_path", ""), ("model", None), ("tokenizer", None),
    ("num_prompts", 1000), ("sharegpt_output_len", None), ("sharegpt_context_len", None),
    ("random_input_len", 1024), ("random_output_len", 1024), ("random_range_ratio", 0.0),
    ("request_rate", INF), ("max_concurrency", None), ("multi", False),
    ("request_rate_range", "2,34,2"), ("output_file", None), ("disable_tqdm", False),
    ("disable_stream", False), ("return_logprob", False), ("seed", 1),
    ("disable_ignore_eos", False), ("extra_request_body", None),
    ("apply_chat_template", False), ("profile", False), ("lora_name", None)] + _GSP
SG_NS_053 = [
    ("backend", "sglang"), ("base_url", None), ("host", "0.0.0.0"), ("port", None),
    ("dataset_name", "sharegpt"), ("dataset_path", ""), ("model", None), ("tokenizer", None),
    ("num_prompts", 1000), ("sharegpt_output_len", None), ("sharegpt_context_len", None),
    ("random_input_len", 1024), ("random_output_len", 1024), ("random_range_ratio", 0.0),
    ("random_image_num_images", 1), ("random_image_resolution", "1080p"),
    ("request_rate", INF), ("use_trace_timestamps", False), ("max_concurrency", None),
    ("output_file", None), ("output_details", False), ("disable_tqdm", False),
    ("disable_stream", False), ("return_logprob", False), ("seed", 1),
    ("disable_ignore_eos", False), ("extra_request_body", None),
    ("apply_chat_template", False), ("profile", False), ("lora_name", None),
    ("prompt_suffix", ""), ("pd_separated", False), ("flush_cache", False),
    ("warmup_requests", 1), ("tokenize_prompt", False)] + _GSP + [
    ("mooncake_slowdown_factor", 1.0), ("mooncake_num_rounds", 1),
    ("mooncake_workload", "conversation")]
_PROFILE = [
    ("profile", False), ("plot_throughput", False), ("profile_activities", ["CPU", "GPU"]),
    ("profile_start_step", None), ("profile_steps", None), ("profile_num_steps", None),
    ("profile_by_stage", False), ("profile_stages", None), ("profile_output_dir", None),
    ("profile_prefix", None), ("lora_name", None), ("lora_request_distribution", "uniform"),
    ("lora_zipf_alpha", 1.5), ("prompt_suffix", ""), ("pd_separated", False),
    ("profile_prefill_url", None), ("profile_decode_url", None), ("flush_cache", False)]
_GSP2 = _GSP + [("gsp_range_ratio", 1.0), ("gsp_fast_prepare", False),
                ("gsp_send_routing_key", False), ("gsp_num_turns", 1), ("gsp_ordered", False)]
_IMG = [("image_count", 1), ("image_resolution", "1080p"), ("random_image_count", False),
        ("image_format", "jpeg"), ("image_content", "random")]
_LOGPROB = [("return_logprob", False), ("top_logprobs_num", 0), ("token_ids_logprob", None),
            ("logprob_start_len", -1), ("return_routed_experts", False)]
SG_NS_0510 = [
    ("backend", "sglang"), ("base_url", None), ("host", "0.0.0.0"), ("port", None),
    ("ready_check_timeout_sec", 60), ("dataset_name", "sharegpt"), ("dataset_path", ""),
    ("model", None), ("served_model_name", None), ("tokenizer", None), ("num_prompts", 1000),
    ("sharegpt_output_len", None), ("sharegpt_context_len", None), ("random_input_len", 1024),
    ("random_output_len", 1024), ("random_range_ratio", 0.0)] + _IMG + [
    ("request_rate", INF), ("use_trace_timestamps", False), ("max_concurrency", None),
    ("output_file", None), ("output_details", False), ("print_requests", False),
    ("disable_tqdm", False), ("disable_stream", False)] + _LOGPROB + [
    ("seed", 1), ("disable_ignore_eos", False), ("extra_request_body", None),
    ("apply_chat_template", False)] + _PROFILE + [
    ("warmup_requests", 1), ("tokenize_prompt", False)] + _GSP2 + [
    ("mooncake_slowdown_factor", 1.0), ("mooncake_num_rounds", 1),
    ("mooncake_workload", "conversation"), ("tag", None), ("header", None)]
SG_NS_0523 = [
    ("backend", "sglang"), ("base_url", None), ("host", "0.0.0.0"), ("port", None),
    ("ready_check_timeout_sec", 60), ("dataset_name", "sharegpt"), ("dataset_path", ""),
    ("dataset_offset", 0), ("agentic_max_turns", None), ("speed_bench_category", None),
    ("speed_bench_output_len", 512), ("model", None), ("served_model_name", None),
    ("tokenizer", None), ("num_prompts", 1000), ("sharegpt_output_len", None),
    ("sharegpt_context_len", None), ("random_input_len", 1024), ("random_output_len", 1024),
    ("random_range_ratio", 0.0)] + _IMG + [
    ("request_rate", INF), ("use_trace_timestamps", False), ("max_concurrency", None),
    ("output_file", None), ("output_details", False), ("goodput", None),
    ("print_requests", False), ("disable_tqdm", False), ("disable_stream", False)] + _LOGPROB + [
    ("cache_report", False), ("seed", 42), ("disable_ignore_eos", False), ("temperature", 0.0),
    ("top_p", 1.0), ("extra_request_body", None), ("apply_chat_template", False)] + _PROFILE + [
    ("flush_cache_timeout", 60.0), ("warmup_requests", 1), ("tokenize_prompt", False)] + _GSP2 + [
    ("gsp_group_distribution", "uniform"), ("gsp_zipf_alpha", None),
    ("mooncake_slowdown_factor", 1.0), ("mooncake_num_rounds", 1),
    ("mooncake_workload", "conversation"), ("fake_prefill", False), ("tag", None),
    ("header", None), ("rust_client", False), ("rust_worker_threads", None)]


def write(name, lines):
    with open(os.path.join(HERE, name), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


EXPECTED = {}


# ==========================================================================
# vLLM
# ==========================================================================

def vllm_script_01():
    """v0.1.x benchmarks/benchmark_serving.py: non-streaming, unblocked."""
    rng = random.Random(101)
    R, n, t = 32, 128, 45.0
    reqs = []
    for i in range(R):
        pl = rng.randint(48, 620)
        # all 32 prompts arrive at t=0; prefill is batched, so TTFT grows with
        # the position in the prefill queue
        ttft = 0.18 + 0.021 * i + rng.uniform(0, 0.02)
        gaps, toks = decode_plain(rng, n, t)
        reqs.append(Req(pl, ttft, gaps, toks, tail=0.004 + rng.uniform(0, 0.003)))
    schedule(reqs, burst_arrivals(R), None, rng=rng)
    # non-streaming: REQUEST_LATENCY holds the full request time
    lat = [r.lat_done + 0.001 for r in reqs]
    benchmark_time = max(r.start + l for r, l in zip(reqs, lat)) + 0.012
    out = [
        "Namespace(backend='vllm', host='localhost', port=8001, "
        "dataset='ShareGPT_V3_unfiltered_cleaned_split.json', "
        "tokenizer='huggyllama/llama-7b', best_of=1, use_beam_search=False, "
        "num_prompts=32, request_rate=inf, seed=0)",
        f"Total time: {benchmark_time:.2f} s",
        f"Throughput: {R / benchmark_time:.2f} requests/s",
    ]
    avg_latency = np_mean(lat)
    out.append(f"Average latency: {avg_latency:.2f} s")
    avg_per_token_latency = np_mean([l / (r.prompt_len + r.n) for r, l in zip(reqs, lat)])
    out.append(f"Average latency per token: {avg_per_token_latency:.2f} s")
    avg_per_output_token_latency = np_mean([l / r.n for r, l in zip(reqs, lat)])
    out.append("Average latency per output token: "
               f"{avg_per_output_token_latency:.2f} s")
    write("vllm-script-0.1.txt", out)
    s = summary(reqs, lambda r: r.lat_done, None, benchmark_time, t, None,
                "v0.1.x unblocked output: no 'Serving Benchmark Result' header, no TTFT/"
                "TPOT/ITL rows; non-streaming requests (no chunks). 'Average latency per "
                "output token' = mean(latency/output_len) includes TTFT, so it is above "
                "the true TPOT. 32 requests, 128 output tokens each, all sent at once.")
    s["blocks"] = 1
    s["tokens_per_chunk"] = None
    s["num_requests"] = R
    s["output_len"] = n
    s["total_output_tokens"] = R * n
    EXPECTED["vllm-script-0.1.txt"] = s


def vllm_script_04_05():
    """~v0.4/v0.5 benchmarks/benchmark_serving.py (Input token throughput)."""
    rng = random.Random(4050)
    R, n, t, inp = 32, 128, 22.0, 1024
    reqs = []
    for i in range(R):
        # 8 prompts of 1024 tokens per prefill batch of 8192 tokens
        ttft = 0.165 * (i // 8 + 1) + rng.uniform(0.0, 0.012)
        gaps, toks = decode_plain(rng, n, t)
        reqs.append(Req(inp, ttft, gaps, toks, tail=0.0003 + rng.uniform(0, 0.0004)))
    schedule(reqs, burst_arrivals(R), None, rng=rng)
    lat = lambda r: r.lat_done  # latency taken at "[DONE]"
    D = max(r.start + lat(r) for r in reqs) + 0.006
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_chunks()]
    tpots = tpots_of(reqs, lat)
    total_in = sum(r.prompt_len for r in reqs)
    total_out = sum(r.n for r in reqs)
    out = [
        "Namespace(backend='vllm', base_url=None, host='localhost', port=8000, "
        "endpoint='/v1/completions', dataset=None, dataset_name='random', dataset_path=None, "
        "model='meta-llama/Llama-2-7b-chat-hf', tokenizer=None, best_of=1, "
        "use_beam_search=False, num_prompts=32, sharegpt_output_len=None, "
        "sonnet_input_len=550, sonnet_output_len=150, sonnet_prefix_len=200, "
        "random_input_len=1024, random_output_len=128, random_range_ratio=1.0, "
        "request_rate=inf, seed=0, trust_remote_code=False, disable_tqdm=False, "
        "save_result=False, metadata=None, result_dir=None, result_filename=None)",
        "Starting initial single prompt test run...",
        "Initial test run completed. Starting main benchmark run...",
        "Traffic request rate: inf",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        TITLE,
        row("Successful requests:", R),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        rowf("Request throughput (req/s):", R / D),
        rowf("Input token throughput (tok/s):", total_in / D),
        rowf("Output token throughput (tok/s):", total_out / D),
        hdr("Time to First Token"),
        rowf("Mean TTFT (ms):", np_mean(ttfts) * 1000),
        rowf("Median TTFT (ms):", np_median(ttfts) * 1000),
        rowf("P99 TTFT (ms):", np_percentile(ttfts, 99) * 1000),
        hdr("Time per Output Token (excl. 1st token)"),
        rowf("Mean TPOT (ms):", np_mean(tpots) * 1000),
        rowf("Median TPOT (ms):", np_median(tpots) * 1000),
        rowf("P99 TPOT (ms):", np_percentile(tpots, 99) * 1000),
        hdr("Inter-token Latency"),
        rowf("Mean ITL (ms):", np_mean(itls) * 1000),
        rowf("Median ITL (ms):", np_median(itls) * 1000),
        rowf("P99 ITL (ms):", np_percentile(itls, 99) * 1000),
        CLOSE,
    ]
    write("vllm-script-0.4-0.5.txt", out)
    s = summary(reqs, lat, Req.itl_chunks, D, t, 1,
                "All 32 requests sent at once (no client concurrency cap in this script "
                "version); TTFT grows with the prefill batch (4 batches). ITL per chunk, "
                "1 token per chunk, so ITL ~= TPOT. Output tokens counted by re-tokenizing.")
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             max_concurrency=None)
    EXPECTED["vllm-script-0.4-0.5.txt"] = s


def vllm_script_061():
    """v0.6.1.post2 / v0.6.2 benchmarks/benchmark_serving.py, with the
    mean/median E2EL swap."""
    rng = random.Random(612)
    R, n, t, inp = 24, 256, 25.0, 512
    reqs = []
    slow = {5, 11, 17, 22}  # preempted / re-queued requests: long TTFT
    for i in range(R):
        if i in slow:
            ttft = 1.35 + 0.33 * len([j for j in slow if j < i]) + rng.uniform(0, 0.05)
        else:
            ttft = 0.145 + 0.005 * i + rng.uniform(0.0, 0.03)
        gaps, toks = decode_plain(rng, n, t)
        reqs.append(Req(inp, ttft, gaps, toks, tail=0.0003 + rng.uniform(0, 0.0004)))
    schedule(reqs, burst_arrivals(R), None, rng=rng)
    lat = lambda r: r.lat_done
    D = max(r.start + lat(r) for r in reqs) + 0.005
    pcts = [99.0]
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_chunks()]
    tpots = tpots_of(reqs, lat)
    e2els = [lat(r) for r in reqs]
    stats = {
        "ttft": stats_ms(ttfts, pcts),
        "tpot": stats_ms(tpots, pcts),
        "itl": stats_ms(itls, pcts),
        "e2el": stats_ms(e2els, pcts),
    }
    # THE BUG (calculate_metrics in 0.6.1.post2 / 0.6.2):
    #   mean_e2el_ms=np.median(e2els or 0) * 1000,
    #   median_e2el_ms=np.mean(e2els or 0) * 1000,
    true_mean, true_median = stats["e2el"]["mean"], stats["e2el"]["median"]
    stats["e2el"]["mean"], stats["e2el"]["median"] = true_median, true_mean
    total_in = sum(r.prompt_len for r in reqs)
    total_out = sum(r.n for r in reqs)
    out = [
        "Namespace(backend='vllm', base_url=None, host='localhost', port=8000, "
        "endpoint='/v1/completions', dataset=None, dataset_name='random', dataset_path=None, "
        "model='meta-llama/Meta-Llama-3.1-8B-Instruct', tokenizer=None, best_of=1, "
        "use_beam_search=False, num_prompts=24, logprobs=None, request_rate=inf, seed=0, "
        "trust_remote_code=False, disable_tqdm=False, profile=False, save_result=False, "
        "metadata=None, result_dir=None, result_filename=None, ignore_eos=True, "
        "percentile_metrics='ttft,tpot,itl,e2el', metric_percentiles='99', "
        "sonnet_input_len=550, sonnet_output_len=150, sonnet_prefix_len=200, "
        "sharegpt_output_len=None, random_input_len=512, random_output_len=256, "
        "random_range_ratio=1.0, random_prefix_len=0, hf_subset=None, hf_split=None, "
        "hf_output_len=None)",
        "Starting initial single prompt test run...",
        "Initial test run completed. Starting main benchmark run...",
        "Traffic request rate: inf",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        TITLE,
        row("Successful requests:", R),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        rowf("Request throughput (req/s):", R / D),
        rowf("Output token throughput (tok/s):", total_out / D),
        rowf("Total Token throughput (tok/s):", (total_in + total_out) / D),
    ]
    vllm_sections(out, stats, ["ttft", "tpot", "itl", "e2el"], pcts)
    out.append(CLOSE)
    write("vllm-script-0.6.1-0.6.2.txt", out)
    s = summary(reqs, lat, Req.itl_chunks, D, t, 1,
                "E2EL MEAN/MEDIAN SWAP BUG: the row 'Mean E2EL (ms):' prints the true "
                "median (%.2f) and 'Median E2EL (ms):' prints the true mean (%.2f). 4 of 24 "
                "requests were re-queued (TTFT 1.3-2.4 s), so the true mean E2E is ~%.1f%% "
                "above the median. All requests sent at once (no client concurrency cap)."
                % (true_median, true_mean, (true_mean / true_median - 1) * 100))
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             max_concurrency=None, true_mean_e2e_ms=round(true_mean, 4),
             true_median_e2e_ms=round(true_median, 4),
             printed_mean_e2el_is="true median", printed_median_e2el_is="true mean")
    EXPECTED["vllm-script-0.6.1-0.6.2.txt"] = s


def vllm_080_goodput():
    """packaged vllm/benchmarks/serve.py 0.8.0-0.10.0, --goodput."""
    rng = random.Random(800)
    R, n, t, inp = 32, 256, 24.0, 1024
    reqs = []
    for i in range(R):
        ttft = 0.142 * (i // 8 + 1) + 0.006 * (i % 8) + rng.uniform(0.0, 0.01)
        gaps, toks = decode_plain(rng, n, t)
        reqs.append(Req(inp, ttft, gaps, toks))
    schedule(reqs, burst_arrivals(R), None, rng=rng)
    lat = lambda r: r.lat_last  # packaged 0.8.0+: time of the last chunk
    D = max(r.start + lat(r) for r in reqs) + 0.004
    pcts = [99.0]
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_chunks()]
    tpots = tpots_of(reqs, lat)
    slo = {"ttft": 500.0, "tpot": 30.0}
    good = sum(1 for r, tp in zip(reqs, tpots)
               if slo["ttft"] / 1000 >= r.ttft and slo["tpot"] / 1000 >= tp)
    stats = {"ttft": stats_ms(ttfts, pcts), "tpot": stats_ms(tpots, pcts),
             "itl": stats_ms(itls, pcts)}
    total_in = sum(r.prompt_len for r in reqs)
    total_out = sum(r.n for r in reqs)
    out = [
        "INFO 04-02 14:21:07 [__init__.py:239] Automatically detected platform cuda.",
        "Namespace(subparser='bench', bench_type='serve', dispatch_function="
        "<function BenchmarkServingSubcommand.cmd at 0x7f5b2c1a3e20>, backend='vllm', "
        "base_url=None, host='127.0.0.1', port=8000, endpoint='/v1/completions', "
        "dataset_name='random', dataset_path=None, max_concurrency=None, "
        "model='meta-llama/Llama-3.1-8B-Instruct', tokenizer=None, use_beam_search=False, "
        "num_prompts=32, logprobs=None, request_rate=inf, burstiness=1.0, seed=0, "
        "trust_remote_code=False, disable_tqdm=False, profile=False, save_result=False, "
        "metadata=None, result_dir=None, result_filename=None, ignore_eos=True, "
        "percentile_metrics='ttft,tpot,itl', metric_percentiles='99', "
        "goodput=['ttft:500', 'tpot:30'], random_input_len=1024, random_output_len=256, "
        "random_range_ratio=1.0, random_prefix_len=0, tokenizer_mode='auto', "
        "served_model_name=None, lora_modules=None)",
        "Starting initial single prompt test run...",
        "Initial test run completed. Starting main benchmark run...",
        "Traffic request rate: inf",
        "Burstiness factor: 1.0 (Poisson process)",
        "Maximum request concurrency: None",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        TITLE,
        row("Successful requests:", R),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        rowf("Request throughput (req/s):", R / D),
        rowf("Request goodput (req/s):", good / D),
        rowf("Output token throughput (tok/s):", total_out / D),
        rowf("Total Token throughput (tok/s):", (total_in + total_out) / D),
    ]
    vllm_sections(out, stats, ["ttft", "tpot", "itl"], pcts)
    out.append(CLOSE)
    write("vllm-0.8-0.10.0-goodput.txt", out)
    s = summary(reqs, lat, Req.itl_chunks, D, t, 1,
                "--goodput ttft:500 tpot:30: %d of 32 requests meet both SLOs (the last "
                "prefill batch of 8 has TTFT > 500 ms). Default --percentile-metrics "
                "(no E2EL section). All requests sent at once (max concurrency None)." % good)
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             max_concurrency=None, good_requests=good)
    EXPECTED["vllm-0.8-0.10.0-goodput.txt"] = s


def vllm_0110():
    """packaged serve.py 0.11.0: peak rows, no 'Failed requests:'."""
    rng = random.Random(1100)
    R, C, n, t, inp = 48, 8, 128, 14.0, 512
    reqs = []
    for i in range(R):
        ttft = 0.072 + rng.uniform(0.0, 0.03)
        gaps, toks = decode_plain(rng, n, t)
        reqs.append(Req(inp, ttft, gaps, toks))
    schedule(reqs, burst_arrivals(R), C, rng=rng)
    lat = lambda r: r.lat_last
    D = max(r.start + lat(r) for r in reqs) + 0.004
    pcts = [99.0]
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_chunks()]
    tpots = tpots_of(reqs, lat)
    peak_tok, peak_conc = peak_buckets(reqs, Req.itl_chunks, lat)
    stats = {"ttft": stats_ms(ttfts, pcts), "tpot": stats_ms(tpots, pcts),
             "itl": stats_ms(itls, pcts)}
    total_in = sum(r.prompt_len for r in reqs)
    total_out = sum(r.n for r in reqs)
    out = [
        "Namespace(subparser='bench', bench_type='serve', dispatch_function="
        "<function BenchmarkServingSubcommand.cmd at 0x7fd1e8b0c4a0>, seed=0, "
        "num_prompts=48, dataset_name='random', dataset_path=None, random_input_len=512, "
        "random_output_len=128, random_range_ratio=0.0, random_prefix_len=0, "
        "backend='vllm', base_url=None, host='127.0.0.1', port=8000, "
        "endpoint='/v1/completions', max_concurrency=8, model='Qwen/Qwen3-8B', "
        "tokenizer=None, logprobs=None, request_rate=inf, burstiness=1.0, "
        "disable_tqdm=False, profile=False, save_result=False, ignore_eos=True, "
        "percentile_metrics='ttft,tpot,itl', metric_percentiles='99', goodput=None, "
        "ready_check_timeout_sec=600)",
        "Starting initial single prompt test run...",
        "Initial test run completed. Starting main benchmark run...",
        "Traffic request rate: inf",
        "Burstiness factor: 1.0 (Poisson process)",
        "Maximum request concurrency: 8",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        "tip: install termplotlib and gnuplot to plot the metrics",
        TITLE,
        row("Successful requests:", R),
        row("Maximum request concurrency:", C),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        rowf("Request throughput (req/s):", R / D),
        rowf("Output token throughput (tok/s):", total_out / D),
        rowf("Peak output token throughput (tok/s):", peak_tok),
        rowf("Peak concurrent requests:", peak_conc),
        rowf("Total Token throughput (tok/s):", (total_in + total_out) / D),
    ]
    vllm_sections(out, stats, ["ttft", "tpot", "itl"], pcts)
    out.append(CLOSE)
    write("vllm-0.11.0.txt", out)
    s = summary(reqs, lat, Req.itl_chunks, D, t, 1,
                "--max-concurrency 8, rate inf. 'Peak concurrent requests' (%d) counts "
                "requests active in the same 1-s bucket, so it can exceed the cap of 8 "
                "when one request ends and the next starts within a second." % peak_conc)
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             max_concurrency=C, peak_output_tok_s=peak_tok, peak_concurrent=peak_conc)
    EXPECTED["vllm-0.11.0.txt"] = s


def vllm_030_all():
    """packaged serve.py 0.30.0-0.33.0 with every optional section."""
    rng = random.Random(3300)
    R, C, n, inp, rate = 48, 8, 256, 512, 6.0
    step_ms = 38.0
    pos_rates = [0.93, 0.80, 0.70, 0.57]  # 4 draft tokens (num_speculative_tokens=4)
    pcts = [50.0, 90.0, 99.0, 99.9]
    reqs = []
    all_accepted = []
    for i in range(R):
        ttft = 0.068 + rng.uniform(0.0, 0.035)
        gaps, toks, acc = decode_spec(rng, n, step_ms, pos_rates)
        all_accepted.extend(acc)
        reqs.append(Req(inp, ttft, gaps, toks))
    schedule(reqs, poisson_arrivals(rng, R, rate), C, rng=rng)
    lat = lambda r: r.lat_last
    D = max(r.start + lat(r) for r in reqs) + 0.004
    # probe loop: one 1-token request, then sleep 1/0.5 s, until stopped
    probe_lats, pt = [], 0.0
    while pt < D:
        pl = 0.031 + rng.uniform(0.0, 0.024)
        probe_lats.append(pl)
        pt += pl + 2.0
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_chunks()]
    tpots = tpots_of(reqs, lat)
    e2els = [lat(r) for r in reqs]
    queue = [r.start - r.arrival for r in reqs]
    e2el_q = [lat(r) + (r.start - r.arrival) for r in reqs]
    peak_tok, peak_conc = peak_buckets(reqs, Req.itl_chunks, lat)
    stats = {"ttft": stats_ms(ttfts, pcts), "tpot": stats_ms(tpots, pcts),
             "itl": stats_ms(itls, pcts), "e2el": stats_ms(e2els, pcts),
             "client_queue_time": stats_ms(queue, pcts),
             "e2el_including_client_queue": stats_ms(e2el_q, pcts)}
    drafts = len(all_accepted)
    draft_tokens = drafts * len(pos_rates)
    accepted = sum(all_accepted)
    per_pos = [sum(1 for a in all_accepted if a >= i + 1) / drafts for i in range(len(pos_rates))]
    total_in = sum(r.prompt_len for r in reqs)
    total_out = sum(r.n for r in reqs)
    sel = ["ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue"]
    out = [
        "(MainProcess pid=48213) INFO 11-24 09:12:40 [utils.py:88] Sampling input_len from "
        "[512, 512] and output_len from [256, 256]",
        "Namespace(subparser='bench', bench_type='serve', dispatch_function="
        "<function BenchmarkServingSubcommand.cmd at 0x7f0e6a2d5b20>, seed=0, "
        "num_prompts=48, dataset_name='random', random_input_len=512, "
        "random_output_len=256, random_range_ratio='0.0', backend='openai', "
        "base_url='http://127.0.0.1:8000', endpoint='/v1/completions', header=None, "
        "max_concurrency=8, model='meta-llama/Llama-3.1-8B-Instruct', request_rate=6.0, "
        "burstiness=1.0, probe_request_rate=0.5, disable_tqdm=False, num_warmups=0, "
        "save_result=False, ignore_eos=True, percentile_metrics='ttft,tpot,itl,e2el,"
        "client_queue_time,e2el_including_client_queue', "
        "metric_percentiles='50,90,99,99.9', goodput=None, temperature=0.0, "
        "ready_check_timeout_sec=0)",
        "Starting initial single prompt test run...",
        "Skipping endpoint ready check.",
        "Starting main benchmark run...",
        "Traffic request rate: 6.0",
        "Burstiness factor: 1.0 (Poisson process)",
        "Maximum request concurrency: 8",
        # tqdm() is created before the probe print (serve.py 0.33.0 lines 999, 1045)
        tqdm_line(R, [r.start + lat(r) for r in reqs], glued="Probe request rate: 0.5 req/s"),
        "tip: install termplotlib and gnuplot to plot the metrics",
        TITLE,
        row("Successful requests:", R),
        row("Failed requests:", 0),
        row("Maximum request concurrency:", C),
        rowf("Request rate configured (RPS):", rate),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        rowf("Request throughput (req/s):", R / D),
        rowf("Output token throughput (tok/s):", total_out / D),
        rowf("Peak output token throughput (tok/s):", peak_tok),
        rowf("Peak concurrent requests:", peak_conc),
        rowf("Total token throughput (tok/s):", (total_in + total_out) / D),
        hdr("Probe Requests"),
        row("Probe requests completed:", len(probe_lats)),
        row("Probe requests failed:", 0),
        rowf("Median probe E2EL (ms):", np_median(probe_lats) * 1000),
        rowf("P99 probe E2EL (ms):", np_percentile(probe_lats, 99) * 1000),
        rowf("Max probe E2EL (ms):", max(probe_lats) * 1000),
    ]
    vllm_sections(out, stats, sel, pcts)
    vllm_sections(out, stats, sel, pcts, attrs=(
        ("client_queue_time", "Client Queue Time", "Client-side Queueing"),
        ("e2el_including_client_queue", "E2EL incl. Client Queue",
         "Queue-inclusive End-to-end Latency")))
    out += [
        hdr("Speculative Decoding"),
        rowf("Acceptance rate (%):", accepted / draft_tokens * 100),
        rowf("Acceptance length:", 1 + accepted / drafts),
        row("Drafts:", drafts),
        row("Draft tokens:", draft_tokens),
        row("Accepted tokens:", accepted),
        "Per-position acceptance (%):",
    ]
    for i, rr in enumerate(per_pos):
        out.append(rowf(f"  Position {i}:", rr * 100))
    out.append(CLOSE)
    write("vllm-0.30-all-sections.txt", out)
    mean_tpc = np_mean([m for r in reqs for m in r.toks[1:]])
    s = summary(reqs, lat, Req.itl_chunks, D, round(step_ms / (1 + sum(pos_rates)), 4),
                round(mean_tpc, 4),
                "Speculative decoding: one verification step (~%.0f ms) per streamed chunk, "
                "1 + accepted tokens per chunk (design mean %.2f; realised %.3f over decode "
                "chunks). ITL is per chunk, so mean ITL ~= %.1f x TPOT. Peak output token "
                "throughput counts chunks, not tokens. Rate 6 req/s with --max-concurrency 8 "
                "builds a client queue (Client Queue Time up to several seconds); "
                "--probe-request-rate 0.5; --metric-percentiles 50,90,99,99.9 so 'Median' "
                "and 'P50' rows both appear. design_tpot_ms = step/(1+sum(per-position "
                "rates)); true_tpot_ms is the realised decode time per token."
                % (step_ms, 1 + sum(pos_rates), mean_tpc, mean_tpc))
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             max_concurrency=C, request_rate=rate, spec_drafts=drafts,
             spec_accepted_tokens=accepted, acceptance_length=round(1 + accepted / drafts, 4),
             probe_requests=len(probe_lats), peak_output_tok_s=peak_tok,
             peak_concurrent=peak_conc,
             mean_client_queue_ms=round(np_mean(queue) * 1000, 4))
    EXPECTED["vllm-0.30-all-sections.txt"] = s


def vllm_024_diffusion():
    """packaged serve.py 0.24.0-0.26.0 with the Diffusion Decoding section."""
    rng = random.Random(2400)
    R, C, n, inp, L = 16, 4, 256, 1024, 32
    step_ms = 5.5
    reqs = []
    steps_total = 0
    canvases = 0
    canvas_ms = []
    for i in range(R):
        # each streamed chunk is one committed canvas of L tokens; a canvas
        # costs (denoising steps + 1 commit step) model steps
        chunk_times = []
        for c in range(n // L):
            ds = rng.randint(9, 15)
            steps_total += ds
            canvases += 1
            dur = (ds + 1) * step_ms / 1000.0 * (1 + rng.gauss(0.0, 0.02))
            chunk_times.append(dur)
            canvas_ms.append(dur * 1000)
        prefill = 0.041 + rng.uniform(0.0, 0.012)
        ttft = prefill + chunk_times[0]
        reqs.append(Req(inp, ttft, chunk_times[1:], [L] * (n // L)))
    schedule(reqs, burst_arrivals(R), C, rng=rng)
    lat = lambda r: r.lat_last
    D = max(r.start + lat(r) for r in reqs) + 0.004
    pcts = [99.0]
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_chunks()]
    tpots = tpots_of(reqs, lat)
    peak_tok, peak_conc = peak_buckets(reqs, Req.itl_chunks, lat)
    stats = {"ttft": stats_ms(ttfts, pcts), "tpot": stats_ms(tpots, pcts),
             "itl": stats_ms(itls, pcts)}
    total_in = sum(r.prompt_len for r in reqs)
    total_out = sum(r.n for r in reqs)
    committed = total_out
    delta_steps = steps_total + canvases  # denoising steps + one commit step per canvas
    canvas_positions = delta_steps * L
    block_size = canvas_positions / delta_steps
    num_canvases = committed / block_size
    denoising = delta_steps - num_canvases
    out = [
        "Namespace(subparser='bench', bench_type='serve', dispatch_function="
        "<function BenchmarkServingSubcommand.cmd at 0x7f7a90e1b6a0>, seed=0, "
        "num_prompts=16, dataset_name='random', random_input_len=1024, "
        "random_output_len=256, random_range_ratio=0.0, backend='vllm', base_url=None, "
        "host='127.0.0.1', port=8000, endpoint='/v1/completions', max_concurrency=4, "
        "model='google/diffusiongemma-2b-it', request_rate=inf, burstiness=1.0, "
        "ignore_eos=True, percentile_metrics=None, metric_percentiles='99', "
        "goodput=None, temperature=None, ready_check_timeout_sec=0)",
        "WARNING: vllm bench serve no longer sets temperature==0 (greedy) in requests by "
        "default. The default will be determined on the server side and can be "
        "model/API specific. For the old behavior, include --temperature=0.",
        "Starting initial single prompt test run...",
        "Skipping endpoint ready check.",
        "Starting main benchmark run...",
        "Traffic request rate: inf",
        "Burstiness factor: 1.0 (Poisson process)",
        "Maximum request concurrency: 4",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        "tip: install termplotlib and gnuplot to plot the metrics",
        TITLE,
        row("Successful requests:", R),
        row("Failed requests:", 0),
        row("Maximum request concurrency:", C),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        rowf("Request throughput (req/s):", R / D),
        rowf("Output token throughput (tok/s):", total_out / D),
        rowf("Peak output token throughput (tok/s):", peak_tok),
        rowf("Peak concurrent requests:", peak_conc),
        rowf("Total token throughput (tok/s):", (total_in + total_out) / D),
    ]
    vllm_sections(out, stats, ["ttft", "tpot", "itl"], pcts)
    out.append(hdr("Diffusion Decoding"))
    for label, value, fmt in (
            ("Committed throughput (tok/s):", committed / D, "{:<10.2f}"),
            ("Denoising steps per canvas:", denoising / num_canvases, "{:<10.2f}"),
            ("Committed per denoising step:", committed / denoising, "{:<10.2f}"),
            ("Committed tokens:", int(committed), "{:<10d}"),
            ("Denoising steps:", int(denoising), "{:<10d}"),
            ("Canvas positions evaluated:", int(canvas_positions), "{:<10d}")):
        out.append("{:<40} ".format(label) + fmt.format(value))
    out.append(CLOSE)
    write("vllm-0.24-diffusion.txt", out)
    per_tok = np_mean(canvas_ms) / L
    s = summary(reqs, lat, Req.itl_chunks, D, None, L,
                "Diffusion decoding: each streamed chunk is one committed canvas of 32 tokens "
                "(8 canvases per 256-token request); the first canvas arrives with the first "
                "chunk, so TTFT includes it. true_tpot_ms = mean canvas time / 32 (generation "
                "time per token). The tool's TPOT (E2E-TTFT)/(n-1) covers only 7 of 8 canvases "
                "over 255 tokens (tool_tpot_ms, ~12%% lower). ITL is per canvas "
                "(~32 x per-token time). Peak output token throughput counts chunks.")
    s["true_tpot_ms"] = round(per_tok, 3)
    s["design_tpot_ms"] = round(12 * step_ms / L + step_ms / L, 4)  # (mean 12 steps + commit)
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             max_concurrency=C, first_chunk_tokens=L, canvas_length=L,
             diffusion_denoising_steps=int(denoising), peak_output_tok_s=peak_tok,
             peak_concurrent=peak_conc)
    EXPECTED["vllm-0.24-diffusion.txt"] = s


def vllm_029_pooling():
    """packaged serve.py 0.29.0-0.33.0, pooling (embeddings) backend."""
    rng = random.Random(2900)
    R, C, batch, inp = 64, 16, 4, 512
    reqs = []
    for i in range(R):
        latency = 0.098 + rng.uniform(0.0, 0.03) + (0.02 if i % 16 == 3 else 0.0)
        r = Req(batch * inp, latency, [], [0])
        r.n = 0
        reqs.append(r)
    schedule(reqs, burst_arrivals(R), C, rng=rng)
    lat = lambda r: r.ttft
    D = max(r.start + lat(r) for r in reqs) + 0.003
    pcts = [99.0]
    e2els = [lat(r) for r in reqs]
    stats = {"e2el": stats_ms(e2els, pcts)}
    total_in = sum(r.prompt_len for r in reqs)
    seqs = R * batch
    out = [
        "Namespace(subparser='bench', bench_type='serve', dispatch_function="
        "<function BenchmarkServingSubcommand.cmd at 0x7f31c05a2fc0>, seed=0, "
        "num_prompts=64, dataset_name='random', random_input_len=512, "
        "random_output_len=128, random_range_ratio='0.0', random_batch_size=4, "
        "backend='openai-embeddings', base_url=None, host='127.0.0.1', port=8000, "
        "endpoint='/v1/embeddings', max_concurrency=16, model='BAAI/bge-m3', "
        "request_rate=inf, burstiness=1.0, percentile_metrics=None, "
        "metric_percentiles='99', goodput=None, ready_check_timeout_sec=0)",
        "Starting initial single prompt test run...",
        "Skipping endpoint ready check.",
        "Starting main benchmark run...",
        "Traffic request rate: inf",
        "Burstiness factor: 1.0 (Poisson process)",
        "Maximum request concurrency: 16",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        TITLE,
        row("Successful requests:", R),
        row("Failed requests:", 0),
        row("Maximum request concurrency:", C),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        rowf("Request throughput (req/s):", R / D),
        rowf("Input throughput (inputs/s):", seqs / D),
        rowf("Total token throughput (tok/s):", total_in / D),
    ]
    vllm_sections(out, stats, ["e2el"], pcts)
    out.append(CLOSE)
    write("vllm-0.29-pooling.txt", out)
    s = {
        "true_tpot_ms": None, "tokens_per_chunk": None, "blocks": 1,
        "num_requests": R, "max_concurrency": C, "duration_s": round(D, 6),
        "input_sequences": seqs, "total_input_tokens": total_in,
        "simulated_mean_e2e_ms": round(np_mean(e2els) * 1000, 4),
        "notes": "Pooling run (openai-embeddings, --random-batch-size 4: 4 inputs of 512 "
                 "tokens per request). No generated tokens, no output throughput, no TTFT/"
                 "TPOT/ITL; default --percentile-metrics for pooling is e2el. TPOT is "
                 "undefined. The run is short (duration %.3f s, printed %.2f): the 2-decimal "
                 "duration alone allows about +-1%% on R/D when re-deriving throughputs."
                 % (D, D),
    }
    EXPECTED["vllm-0.29-pooling.txt"] = s


def vllm_017_rtfx():
    """packaged serve.py 0.17.0-0.18.0, ASR (openai-audio) with RTFx."""
    rng = random.Random(1700)
    R, C, n, t, prompt_len = 32, 8, 64, 6.0, 5
    reqs = []
    audio = []
    for i in range(R):
        dur = rng.uniform(4.0, 16.5)
        audio.append(dur)
        ttft = 0.048 + 0.0012 * dur + rng.uniform(0.0, 0.01)  # encoder time grows with audio
        gaps, toks = decode_plain(rng, n, t)
        # the final usage-only chunk also moves most_recent_timestamp
        reqs.append(Req(prompt_len, ttft, gaps, toks, tail=0.0004 + rng.uniform(0, 0.0003)))
    schedule(reqs, burst_arrivals(R), C, rng=rng)
    lat = lambda r: r.lat_done
    D = max(r.start + lat(r) for r in reqs) + 0.004
    pcts = [99.0]
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_chunks()]
    tpots = tpots_of(reqs, lat)
    peak_tok, peak_conc = peak_buckets(reqs, Req.itl_chunks, lat)
    stats = {"ttft": stats_ms(ttfts, pcts), "tpot": stats_ms(tpots, pcts),
             "itl": stats_ms(itls, pcts)}
    total_in = sum(r.prompt_len for r in reqs)
    total_out = sum(r.n for r in reqs)
    out = [
        "Namespace(subparser='bench', bench_type='serve', dispatch_function="
        "<function BenchmarkServingSubcommand.cmd at 0x7f9d4b7e1d00>, seed=0, "
        "num_prompts=32, dataset_name='hf', dataset_path='openslr/librispeech_asr', "
        "hf_subset='clean', hf_split='test', hf_output_len=64, backend='openai-audio', "
        "base_url=None, host='127.0.0.1', port=8000, endpoint='/v1/audio/transcriptions', "
        "max_concurrency=8, model='openai/whisper-large-v3-turbo', request_rate=inf, "
        "burstiness=1.0, ignore_eos=True, percentile_metrics=None, "
        "metric_percentiles='99', goodput=None, temperature=None, "
        "ready_check_timeout_sec=0)",
        "WARNING: vllm bench serve no longer sets temperature==0 (greedy) in requests by "
        "default. The default will be determined on the server side and can be "
        "model/API specific. For the old behavior, include --temperature=0.",
        "Starting initial single prompt test run...",
        "Skipping endpoint ready check.",
        "Starting main benchmark run...",
        "Traffic request rate: inf",
        "Burstiness factor: 1.0 (Poisson process)",
        "Maximum request concurrency: 8",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        "tip: install termplotlib and gnuplot to plot the metrics",
        TITLE,
        row("Successful requests:", R),
        row("Failed requests:", 0),
        row("Maximum request concurrency:", C),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        rowf("Request throughput (req/s):", R / D),
        rowf("Output token throughput (tok/s):", total_out / D),
        rowf("Peak output token throughput (tok/s):", peak_tok),
        rowf("Peak concurrent requests:", peak_conc),
        rowf("RTFx (Inverse Real-Time Factor):", math.fsum(audio) / D),
        rowf("Total token throughput (tok/s):", (total_in + total_out) / D),
    ]
    vllm_sections(out, stats, ["ttft", "tpot", "itl"], pcts)
    out.append(CLOSE)
    write("vllm-0.17-rtfx.txt", out)
    s = summary(reqs, lat, Req.itl_chunks, D, t, 1,
                "ASR (openai-audio, Whisper) with --max-concurrency 8; %.1f s of audio in "
                "total, RTFx = audio seconds / duration. Output held at 64 tokens per request "
                "(--ignore-eos, --hf-output-len 64); prompt is 5 decoder-prompt tokens per "
                "request. Latency ends at the final usage-only chunk (+0.4-0.7 ms)."
                % math.fsum(audio))
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             max_concurrency=C, audio_seconds=round(math.fsum(audio), 4),
             rtfx=round(math.fsum(audio) / D, 4), peak_output_tok_s=peak_tok,
             peak_concurrent=peak_conc)
    EXPECTED["vllm-0.17-rtfx.txt"] = s


# ==========================================================================
# SGLang
# ==========================================================================

def sg_sections(out, e2e=None, ttft=None, tpot=None, itl=None, itl_header="Inter-token Latency"):
    """Print the sections that exist, with the rows given as (label_prefix, value)."""
    if e2e:
        out.append(hdr("End-to-End Latency"))
        for lab, v in e2e:
            out.append(rowf("{} E2E Latency (ms):".format(lab), v))
    if ttft:
        out.append(hdr("Time to First Token"))
        for lab, v in ttft:
            out.append(rowf("{} TTFT (ms):".format(lab), v))
    if tpot:
        out.append(hdr("Time per Output Token (excl. 1st token)"))
        for lab, v in tpot:
            out.append(rowf("{} TPOT (ms):".format(lab), v))
    if itl:
        out.append(hdr(itl_header))
        for lab, v in itl:
            out.append(rowf("{} ITL (ms):".format(lab), v))


def rows_of(xs, labels):
    """labels: Mean, Median, P90, P95, P99, Max (in the version's order)."""
    res = []
    for lab in labels:
        if lab == "Mean":
            v = np_mean(xs)
        elif lab == "Median":
            v = np_median(xs)
        elif lab == "Max":
            v = max(xs) if xs else 0.0
        else:
            v = np_percentile(xs, float(lab[1:]))
        res.append((lab, v * 1000))
    return res


def sg_sim_plain(seed, R, n, t, inp, ttft_fn, arrivals_fn, conc, tail=(0.0002, 0.0006)):
    rng = random.Random(seed)
    reqs = []
    for i in range(R):
        gaps, toks = decode_plain(rng, n, t)
        reqs.append(Req(inp, ttft_fn(rng, i), gaps, toks,
                        tail=rng.uniform(*tail)))
    schedule(reqs, arrivals_fn(rng, R), conc, rng=rng)
    return rng, reqs


def sglang_0122():
    R, n, t, inp, rate = 32, 128, 20.0, 512, 8.0
    rng, reqs = sg_sim_plain(
        1220, R, n, t, inp, lambda rng, i: 0.058 + rng.uniform(0.0, 0.03),
        lambda rng, R: poisson_arrivals(rng, R, rate), None)
    lat = lambda r: r.lat_done  # latency updated on every line incl. [DONE]
    D = max(r.start + lat(r) for r in reqs) + 0.005
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_chunks()]
    tpots = tpots_of(reqs, lat)
    total_in = R * inp
    total_out = sum(r.n for r in reqs)  # 0.1.22: re-tokenized generated text
    out = [
        namespace(SG_NS_0122, port=30000, dataset_name='random', model='meta-llama/Llama-2-7b-chat-hf', num_prompts=32, random_input_len=512, random_output_len=128, request_rate=8.0),
        "",
        f"#Input tokens: {total_in}",
        f"#Output tokens: {R * n}",
        "Starting initial single prompt test run...",
        "Initial test run completed. Starting main benchmark run...",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        "",
        TITLE,
        row("Traffic request rate:", rate),
        row("Successful requests:", R),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        rowf("Request throughput (req/s):", R / D),
        rowf("Input token throughput (tok/s):", total_in / D),
        rowf("Output token throughput (tok/s):", total_out / D),
    ]
    sg_sections(out,
                ttft=rows_of(ttfts, ["Mean", "Median", "P99"]),
                tpot=rows_of(tpots, ["Mean", "Median", "P99"]),
                itl=rows_of(itls, ["Mean", "Median", "P99"]))
    out.append(CLOSE)
    write("sglang-0.1.22.txt", out)
    s = summary(reqs, lat, Req.itl_chunks, D, t, 1,
                "--request-rate 8 (Poisson arrivals), no client concurrency cap. 0.1.22 has no "
                "Backend row and no E2E section; output tokens re-tokenized. ITL per chunk "
                "(1 token per chunk). Latency ends at [DONE].")
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             max_concurrency=None, request_rate=rate)
    EXPECTED["sglang-0.1.22.txt"] = s


def sglang_0124():
    R, n, t, inp = 48, 256, 30.0, 256
    rng, reqs = sg_sim_plain(
        1240, R, n, t, inp,
        lambda rng, i: 0.21 * (i // 24 + 1) + 0.004 * (i % 24) + rng.uniform(0.0, 0.01),
        lambda rng, R: burst_arrivals(R), None)
    lat = lambda r: r.lat_done
    D = max(r.start + lat(r) for r in reqs) + 0.005
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_chunks()]
    tpots = tpots_of(reqs, lat)
    e2e = [lat(r) for r in reqs]
    total_in = R * inp
    total_out = R * n  # 0.1.24-0.4.3.post2: requested output length
    retok = total_out - 7
    out = [
        namespace(SG_NS_0124, port=30000, dataset_name='random', model='meta-llama/Meta-Llama-3-8B-Instruct', num_prompts=48, random_input_len=256, random_output_len=256),
        "",
        f"#Input tokens: {total_in}",
        f"#Output tokens: {R * n}",
        "Starting initial single prompt test run...",
        "Initial test run completed. Starting main benchmark run...",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        "",
        TITLE,
        row("Backend:", "sglang"),
        row("Traffic request rate:", float("inf")),
        row("Successful requests:", R),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        row("Total generated tokens (retokenized):", retok),
        rowf("Request throughput (req/s):", R / D),
        rowf("Input token throughput (tok/s):", total_in / D),
        rowf("Output token throughput (tok/s):", total_out / D),
    ]
    sg_sections(out,
                e2e=rows_of(e2e, ["Mean", "Median"]),
                ttft=rows_of(ttfts, ["Mean", "Median", "P99"]),
                tpot=rows_of(tpots, ["Mean", "Median", "P99"]),
                itl=rows_of(itls, ["Mean", "Median", "P99"]))
    out.append(CLOSE)
    write("sglang-0.1.24-0.3.5.txt", out)
    s = summary(reqs, lat, Req.itl_chunks, D, t, 1,
                "Native sglang backend (ITL per chunk before 0.4.3.post3; 1 token per chunk). "
                "48 requests sent at once, no client concurrency cap; two prefill batches. "
                "Total generated tokens = requested length (0.1.24-0.4.3.post2).")
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             total_output_tokens_retokenized=retok, max_concurrency=None)
    EXPECTED["sglang-0.1.24-0.3.5.txt"] = s


def sglang_036():
    R, n, t, inp, rate = 40, 256, 18.0, 512, 4.0
    rng, reqs = sg_sim_plain(
        3600, R, n, t, inp, lambda rng, i: 0.041 + rng.uniform(0.0, 0.028),
        lambda rng, R: poisson_arrivals(rng, R, rate), None)
    lat = lambda r: r.lat_done
    D = max(r.start + lat(r) for r in reqs) + 0.005
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_chunks()]
    tpots = tpots_of(reqs, lat)
    e2e = [lat(r) for r in reqs]
    total_in = R * inp
    total_out = R * n
    retok = total_out + 12
    out = [
        namespace(SG_NS_036, backend='vllm', host='127.0.0.1', port=8000, dataset_name='random', model='Qwen/Qwen2.5-7B-Instruct', num_prompts=40, random_input_len=512, random_output_len=256, random_range_ratio=1.0, request_rate=4.0),
        "",
        f"#Input tokens: {total_in}",
        f"#Output tokens: {R * n}",
        "Starting initial single prompt test run...",
        "Initial test run completed. Starting main benchmark run...",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        "",
        TITLE,
        row("Backend:", "vllm"),
        row("Traffic request rate:", rate),
        row("Successful requests:", R),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        row("Total generated tokens (retokenized):", retok),
        rowf("Request throughput (req/s):", R / D),
        rowf("Input token throughput (tok/s):", total_in / D),
        rowf("Output token throughput (tok/s):", total_out / D),
        rowf("Total token throughput (tok/s):", (total_in + total_out) / D),
    ]
    sg_sections(out,
                e2e=rows_of(e2e, ["Mean", "Median"]),
                ttft=rows_of(ttfts, ["Mean", "Median", "P99"]),
                tpot=rows_of(tpots, ["Mean", "Median", "P99"]),
                itl=rows_of(itls, ["Mean", "Median", "P99"]))
    out.append(CLOSE)
    write("sglang-0.3.5.post2-0.3.6.txt", out)
    s = summary(reqs, lat, Req.itl_chunks, D, t, 1,
                "SGLang client against a vLLM server (--backend vllm), --request-rate 4 "
                "(Poisson), no concurrency cap. ITL per chunk, 1 token per chunk.")
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             total_output_tokens_retokenized=retok, max_concurrency=None, request_rate=rate)
    EXPECTED["sglang-0.3.5.post2-0.3.6.txt"] = s


def sglang_0041_block(out, backend, rate, conc, reqs, D, total_in, retok, lat):
    """0.3.6.post3-0.4.1.post7 block (misspelled label)."""
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_chunks()]
    tpots = tpots_of(reqs, lat)
    e2e = [lat(r) for r in reqs]
    R = len(reqs)
    total_out = sum(r.n for r in reqs)
    out += [
        "",
        TITLE,
        row("Backend:", backend),
        row("Traffic request rate:", rate),
        row("Max reqeuest concurrency:", conc if conc else "not set"),
        row("Successful requests:", R),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        row("Total generated tokens (retokenized):", retok),
        rowf("Request throughput (req/s):", R / D),
        rowf("Input token throughput (tok/s):", total_in / D),
        rowf("Output token throughput (tok/s):", total_out / D),
        rowf("Total token throughput (tok/s):", (total_in + total_out) / D),
    ]
    sg_sections(out,
                e2e=rows_of(e2e, ["Mean", "Median"]),
                ttft=rows_of(ttfts, ["Mean", "Median", "P99"]),
                tpot=rows_of(tpots, ["Mean", "Median", "P99"]),
                itl=rows_of(itls, ["Mean", "Median", "P99"]))
    out.append(CLOSE)


def sglang_0041():
    R, n, t, inp = 32, 128, 16.0, 1024
    rng, reqs = sg_sim_plain(
        4170, R, n, t, inp,
        lambda rng, i: 0.29 * (i // 8 + 1) + 0.003 * (i % 8) + rng.uniform(0.0, 0.01),
        lambda rng, R: burst_arrivals(R), None)
    lat = lambda r: r.lat_done
    D = max(r.start + lat(r) for r in reqs) + 0.005
    total_in = R * inp
    retok = R * n - 3
    out = [
        namespace(SG_NS_0417, backend='sglang-oai', port=30000, dataset_name='random', model='meta-llama/Llama-3.1-8B-Instruct', num_prompts=32, random_input_len=1024, random_output_len=128, random_range_ratio=1.0),
        "",
        f"#Input tokens: {total_in}",
        f"#Output tokens: {R * n}",
        "Starting initial single prompt test run...",
        "Initial test run completed. Starting main benchmark run...",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
    ]
    sglang_0041_block(out, "sglang-oai", float("inf"), None, reqs, D, total_in, retok, lat)
    write("sglang-0.3.6.post3-0.4.1.post7.txt", out)
    s = summary(reqs, lat, Req.itl_chunks, D, t, 1,
                "--backend sglang-oai, rate inf, --max-concurrency not given (prints "
                "'not set' under the misspelled label). 32 requests at once, 4 prefill "
                "batches. ITL per chunk, 1 token per chunk.")
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=R * n,
             total_output_tokens_retokenized=retok, max_concurrency=None)
    EXPECTED["sglang-0.3.6.post3-0.4.1.post7.txt"] = s


def sglang_042():
    """0.4.2-0.4.3.post2: misspelled label, Concurrency:, TPOT section,
    'Inter-token Latency'; sglang-oai against an EAGLE server (chunks carry
    several tokens, ITL per chunk)."""
    rng = random.Random(4200)
    R, C, n, inp = 64, 16, 256, 1024
    step_ms = 24.0
    pos_rates = [0.82, 0.62, 0.44]
    reqs = []
    for i in range(R):
        ttft = 0.095 + rng.uniform(0.0, 0.06)
        gaps, toks, acc = decode_spec(rng, n, step_ms, pos_rates)
        reqs.append(Req(inp, ttft, gaps, toks, tail=rng.uniform(0.0002, 0.0006)))
    schedule(reqs, burst_arrivals(R), C, rng=rng)
    lat = lambda r: r.lat_done
    D = max(r.start + lat(r) for r in reqs) + 0.006
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_chunks()]
    tpots = tpots_of(reqs, lat)
    e2e = [lat(r) for r in reqs]
    total_in = R * inp
    total_out = R * n
    retok = total_out - 41
    out = [
        namespace(SG_NS_042, backend='sglang-oai', port=30000, dataset_name='random', model='meta-llama/Llama-3.1-8B-Instruct', num_prompts=64, random_input_len=1024, random_output_len=256, random_range_ratio=1.0, max_concurrency=16),
        "",
        f"#Input tokens: {total_in}",
        f"#Output tokens: {R * n}",
        "Starting initial single prompt test run...",
        "Initial test run completed. Starting main benchmark run...",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        "",
        TITLE,
        row("Backend:", "sglang-oai"),
        row("Traffic request rate:", float("inf")),
        row("Max reqeuest concurrency:", C),
        row("Successful requests:", R),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        row("Total generated tokens (retokenized):", retok),
        rowf("Request throughput (req/s):", R / D),
        rowf("Input token throughput (tok/s):", total_in / D),
        rowf("Output token throughput (tok/s):", total_out / D),
        rowf("Total token throughput (tok/s):", (total_in + total_out) / D),
        rowf("Concurrency:", math.fsum(e2e) / D),
    ]
    sg_sections(out,
                e2e=rows_of(e2e, ["Mean", "Median"]),
                ttft=rows_of(ttfts, ["Mean", "Median", "P99"]),
                tpot=rows_of(tpots, ["Mean", "Median", "P99"]),
                itl=rows_of(itls, ["Mean", "Median", "P99"]))
    out.append(CLOSE)
    write("sglang-0.4.2-0.4.3.post2.txt", out)
    mean_tpc = np_mean([m for r in reqs for m in r.toks[1:]])
    s = summary(reqs, lat, Req.itl_chunks, D, round(step_ms / (1 + sum(pos_rates)), 4),
                round(mean_tpc, 4),
                "--backend sglang-oai against an SGLang server with EAGLE speculative "
                "decoding (no 'Accept length' row before 0.4.3.post3). Each chunk is one "
                "verify step of ~%.0f ms carrying 1 + accepted tokens (realised mean %.3f); "
                "ITL is per chunk, so mean ITL ~= %.1f x TPOT -- reading ITL as TPOT is the "
                "motivating error. --max-concurrency 16. design_tpot_ms = "
                "step/(1+sum(acceptance rates))." % (step_ms, mean_tpc, mean_tpc))
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             total_output_tokens_retokenized=retok, max_concurrency=C,
             concurrency=round(math.fsum(e2e) / D, 4))
    EXPECTED["sglang-0.4.2-0.4.3.post2.txt"] = s


def sglang_053():
    """0.4.6.post4-0.5.3 layout (no TPOT rows, 'Inter-Token Latency'
    Mean/Median/P95/P99/Max), 'trace' request rate (0.5.2+), native backend
    with speculative decoding: ITL split per token."""
    rng = random.Random(5300)
    R, n = 32, 256
    step_ms = 21.0
    pos_rates = [0.86, 0.66, 0.48]
    reqs = []
    t = 0.0
    arrivals = []
    for i in range(R):
        arrivals.append(t)
        t += rng.choice([0.2, 0.35, 0.5, 0.8, 1.1])  # trace timestamps (ms/1000)
    for i in range(R):
        pl = 512 * rng.randint(1, 6) + rng.randint(20, 60)
        ttft = 0.035 + pl * 0.000045 + rng.uniform(0.0, 0.02)
        gaps, toks, acc = decode_spec(rng, n, step_ms, pos_rates)
        reqs.append(Req(pl, ttft, gaps, toks, tail=rng.uniform(0.0002, 0.0006)))
    schedule(reqs, arrivals, None, rng=rng)
    lat = lambda r: r.lat_done
    # + the synchronous GET /get_server_info before benchmark_duration is taken
    D = max(r.start + lat(r) for r in reqs) + 0.004 + 0.0085
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_split()]  # native: gap / new tokens
    e2e = [lat(r) for r in reqs]
    total_in = sum(r.prompt_len for r in reqs)
    total_out = R * n
    retok = total_out - 19
    all_steps = [m for r in reqs for m in r.toks[1:]]
    accept_length = np_mean(all_steps) - 0.0123  # server running average (incl. warmup)
    ns053 = namespace(SG_NS_053, port=30000, dataset_name='mooncake',
                      dataset_path='/data/traces/conv_out256.jsonl',
                      model='meta-llama/Llama-3.1-8B-Instruct', num_prompts=32,
                      use_trace_timestamps=True)
    out = [
        "benchmark_args=" + ns053,
        ns053,
        "",
        "Starting warmup with 1 sequences...",
        "Warmup completed with 1 sequences. Starting main benchmark run...",
        "Using time-based Mooncake request scheduler, ignoring --request-rate.",
        "Starting Mooncake trace replay. Sessions: 32, Rounds per session: 1. "
        "Slowdown factor: 1.0",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        "",
        TITLE,
        row("Backend:", "sglang"),
        row("Traffic request rate:", "trace"),
        row("Max request concurrency:", "not set"),
        row("Successful requests:", R),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total generated tokens:", total_out),
        row("Total generated tokens (retokenized):", retok),
        rowf("Request throughput (req/s):", R / D),
        rowf("Input token throughput (tok/s):", total_in / D),
        rowf("Output token throughput (tok/s):", total_out / D),
        rowf("Total token throughput (tok/s):", (total_in + total_out) / D),
        rowf("Concurrency:", math.fsum(e2e) / D),
        rowf("Accept length:", accept_length),
    ]
    sg_sections(out,
                e2e=rows_of(e2e, ["Mean", "Median"]),
                ttft=rows_of(ttfts, ["Mean", "Median", "P99"]),
                itl=rows_of(itls, ["Mean", "Median", "P95", "P99", "Max"]),
                itl_header="Inter-Token Latency")
    out.append(CLOSE)
    write("sglang-0.4.6.post4-0.5.3.txt", out)
    tpots = tpots_of(reqs, lat)
    s = summary(reqs, lat, Req.itl_split, D, round(step_ms / (1 + sum(pos_rates)), 4),
                round(np_mean(all_steps), 4),
                "No TPOT rows (0.4.3.post3-0.5.5.post1): derive TPOT from E2E/TTFT/totals. "
                "Native sglang backend with speculative decoding: chunks carry ~%.2f tokens "
                "but the client splits each chunk gap evenly over its new tokens, so ITL is "
                "PER TOKEN here (mean ITL ~= TPOT) despite Accept length ~%.2f. 'trace' rate "
                "needs --use-trace-timestamps (0.5.2+), so this layout is really 0.5.2-0.5.3; "
                "mooncake replay of a custom trace with output_length 256 and prompts of "
                "0.5-3k tokens; arrivals 0.2-1.1 s apart. Duration includes the "
                "/get_server_info GET."
                % (np_mean(all_steps), accept_length))
    s["itl_is_per_chunk"] = False
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             total_output_tokens_retokenized=retok, max_concurrency=None,
             accept_length_printed=round(accept_length, 4),
             concurrency=round(math.fsum(e2e) / D, 4))
    EXPECTED["sglang-0.4.6.post4-0.5.3.txt"] = s


def sglang_0523():
    """0.5.23 benchmark/serving.py: Goodput + Cache Hit Details sections."""
    rng = random.Random(5230)
    G, P, C, n = 4, 16, 8, 256
    R = G * P
    sys_len, q_len = 2048, 128
    step_ms = 22.0
    pos_rates = [0.84, 0.63, 0.45]
    order = [(g, p) for g in range(G) for p in range(P)]
    rng.shuffle(order)  # gsp_ordered=False
    seen = set()
    reqs = []
    for g, p in order:
        pl = sys_len + q_len + rng.randint(1, 3)
        if g not in seen:
            seen.add(g)
            cached, dev, host = 0, 0, 0
            ttft = 0.52 + rng.uniform(0.04, 0.16)  # full 2.2k-token prefill under load
        else:
            cached = sys_len
            host = sys_len if rng.random() < 0.15 else 0
            dev = cached - host
            ttft = 0.085 + rng.uniform(0.0, 0.05) + (0.03 if host else 0.0)
        gaps, toks, acc = decode_spec(rng, n, step_ms, pos_rates)
        r = Req(pl, ttft, gaps, toks, tail=rng.uniform(0.0002, 0.0006))
        r.extra.update(cached=cached, dev=dev, host=host, group=g)
        reqs.append(r)
    schedule(reqs, burst_arrivals(R), C, rng=rng)
    lat = lambda r: r.lat_done
    D = max(r.start + lat(r) for r in reqs) + 0.004 + 0.0071  # + GET /server_info
    ttfts = [r.ttft for r in reqs]
    itls = [g for r in reqs for g in r.itl_split()]  # native backend: per token
    tpots = tpots_of(reqs, lat)
    e2e = [lat(r) for r in reqs]
    peak_tok, peak_conc = peak_buckets(reqs, Req.itl_split, lat)
    total_in = sum(r.prompt_len for r in reqs)
    total_out = R * n
    retok = total_out - 23
    all_steps = [m for r in reqs for m in r.toks[1:]]
    accept_length = np_mean(all_steps) + 0.0087
    slos = {"ttft": 500.0, "tpot": 50.0}
    met = {k: 0 for k in slos}
    good = 0
    for r in reqs:
        tp = (lat(r) - r.ttft) / (r.n - 1)
        obs = {"ttft": r.ttft * 1000, "tpot": tp * 1000, "e2el": lat(r) * 1000}
        ok = [k for k, v in slos.items() if obs[k] <= v]
        for k in ok:
            met[k] += 1
        if len(ok) == len(slos):
            good += 1
    tot_cached = sum(r.extra["cached"] for r in reqs)
    tot_dev = sum(r.extra["dev"] for r in reqs)
    tot_host = sum(r.extra["host"] for r in reqs)
    gsp_stats = [
        "",
        "Generating new input data... (num_groups=4, 16, system_prompt_len=2048, "
        "question_len=128, output_len=256, range_ratio=1.0, num_turns=1, "
        "group_distribution='uniform', zipf_alpha=None)",
        "",
        "Generated shared prefix dataset statistics:",
        "Number of groups: 4",
        "Prompts per group: 16",
        "Number of turns: 1",
        "Group distribution: uniform",
        "Total prompts: 64",
        f"Total input tokens: {total_in}",
        f"Total output tokens: {R * n}",
        "Average system prompt length: 2048.0 tokens",
        "Average question length: 128.0 tokens",
        "",
        "Caching generated input data to /root/.cache/sglang/benchmark/"
        "gen_shared_prefix_1_4_16_2048_128_256_PreTrainedTokenizerFast.pkl",
    ]
    ns = namespace(SG_NS_0523, host='127.0.0.1', port=30000,
                   dataset_name='generated-shared-prefix',
                   model='meta-llama/Llama-3.1-8B-Instruct',
                   tokenizer='meta-llama/Llama-3.1-8B-Instruct', max_concurrency=8,
                   goodput=[('ttft', 500.0), ('tpot', 50.0)], cache_report=True, seed=1,
                   gsp_num_groups=4, gsp_prompts_per_group=16)
    out = [
        "benchmark_args=" + ns,
        "Waiting up to 60s for http://127.0.0.1:30000/v1/models to become ready...",
        "Server ready in 0.0s.",
        ns,
        "",
    ] + gsp_stats + [
        "Starting warmup with 1 sequences...",
        "Warmup completed with 1 sequences. Starting main benchmark run...",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        "",
        TITLE,
        row("Backend:", "sglang"),
        row("Traffic request rate:", float("inf")),
        row("Max request concurrency:", C),
        row("Successful requests:", R),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total input text tokens:", total_in),
        row("Total generated tokens:", total_out),
        row("Total generated tokens (retokenized):", retok),
        rowf("Request throughput (req/s):", R / D),
        rowf("Input token throughput (tok/s):", total_in / D),
        rowf("Output token throughput (tok/s):", total_out / D),
        rowf("Peak output token throughput (tok/s):", peak_tok),
        row("Peak concurrent requests:", peak_conc),
        rowf("Total token throughput (tok/s):", (total_in + total_out) / D),
        rowf("Concurrency:", math.fsum(e2e) / D),
        rowf("Accept length:", accept_length),
        hdr("Goodput"),
        row("SLOs (ms):", " ".join(f"{k}:{v:g}" for k, v in slos.items())),
        rowf("Request goodput (req/s):", good / D),
        rowf("SLO attainment (%):", good / R * 100),
    ]
    for k in slos:
        out.append(rowf(f"{k.upper()} SLO attainment (%):", met[k] / R * 100))
    sg_sections(out,
                e2e=rows_of(e2e, ["Mean", "Median", "P90", "P95", "P99"]),
                ttft=rows_of(ttfts, ["Mean", "Median", "P90", "P95", "P99"]),
                tpot=rows_of(tpots, ["Mean", "Median", "P90", "P95", "P99"]),
                itl=rows_of(itls, ["Mean", "Median", "P90", "P95", "P99", "Max"]),
                itl_header="Inter-Token Latency")
    hit_rate = tot_cached / total_in * 100
    out += [
        hdr("Cache Hit Details"),
        row("Total prompt tokens:", total_in),
        row("Total cached tokens:", tot_cached),
        row("  Device:", tot_dev),
        row("  Host:", tot_host),
        "{:<40} {:.1f}%".format("Cache hit rate:", hit_rate),
        "{:<40} {:.1f}%".format("  Device:", tot_dev / tot_cached * 100),
        "{:<40} {:.1f}%".format("  Host:", tot_host / tot_cached * 100),
        CLOSE,
    ]
    write("sglang-0.5.23-goodput-cache.txt", out)
    s = summary(reqs, lat, Req.itl_split, D, round(step_ms / (1 + sum(pos_rates)), 4),
                round(np_mean(all_steps), 4),
                "0.5.23, native backend, generated-shared-prefix dataset (4 groups x 16), "
                "--max-concurrency 8, --goodput ttft:500 tpot:50, --cache-report. The first "
                "request of each group misses the 2048-token shared prefix (TTFT > 500 ms, "
                "fails the TTFT SLO), the other 60 hit it (device, some host). Speculative "
                "decoding: chunks carry ~%.2f tokens but the native client splits ITL per "
                "token (mean ITL ~= TPOT); peak output throughput counts tokens. Duplicate "
                "'  Device:'/'  Host:' rows: counts, then percentages. Pre-block dataset "
                "summary prints unpadded 'Total input tokens:'/'Total output tokens:'. "
                "design_tpot_ms = step/(1+sum(acceptance rates))." % np_mean(all_steps))
    s["itl_is_per_chunk"] = False
    s.update(blocks=1, num_requests=R, output_len=n, total_output_tokens=total_out,
             total_output_tokens_retokenized=retok, max_concurrency=C,
             good_requests=good, cached_tokens=tot_cached, device_cached=tot_dev,
             host_cached=tot_host, accept_length_printed=round(accept_length, 4),
             peak_output_tok_s=peak_tok, peak_concurrent=peak_conc,
             concurrency=round(math.fsum(e2e) / D, 4))
    EXPECTED["sglang-0.5.23-goodput-cache.txt"] = s


def sglang_0510_embedding():
    rng = random.Random(5100)
    R, C, inp = 64, 16, 512
    reqs = []
    for i in range(R):
        latency = 0.036 + rng.uniform(0.0, 0.018)
        r = Req(inp, 0.0, [], [0])
        r.extra["lat"] = latency
        reqs.append(r)
    # Req.lat_done would be 0 for these; schedule on the embedding latency
    for r in reqs:
        r.tail = r.extra["lat"]
    schedule(reqs, burst_arrivals(R), C, rng=rng)
    lat = lambda r: r.extra["lat"]
    D = max(r.start + lat(r) for r in reqs) + 0.004 + 0.0046  # + GET /server_info
    e2e = [lat(r) for r in reqs]
    _, peak_conc = peak_buckets(reqs, lambda r: [], lat)
    total_in = R * inp
    ns = namespace(SG_NS_0510, backend='sglang-embedding', host='127.0.0.1', port=30000,
                   dataset_name='random', model='Alibaba-NLP/gte-Qwen2-1.5B-instruct',
                   num_prompts=64, random_input_len=512, random_output_len=1,
                   random_range_ratio=1.0, max_concurrency=16)
    out = [
        "benchmark_args=" + ns,
        "Waiting up to 60s for http://127.0.0.1:30000/v1/models to become ready...",
        "Server ready in 0.0s.",
        ns,
        "",
        f"#Input tokens: {total_in}",
        f"#Output tokens: {R * 1}",
        "Starting warmup with 1 sequences...",
        "Warmup completed with 1 sequences. Starting main benchmark run...",
        tqdm_line(R, [r.start + lat(r) for r in reqs]),
        "",
        TITLE,
        row("Backend:", "sglang-embedding"),
        row("Traffic request rate:", float("inf")),
        row("Max request concurrency:", C),
        row("Successful requests:", R),
        rowf("Benchmark duration (s):", D),
        row("Total input tokens:", total_in),
        row("Total input text tokens:", total_in),
        rowf("Request throughput (req/s):", R / D),
        rowf("Input token throughput (tok/s):", total_in / D),
        row("Peak concurrent requests:", peak_conc),
        rowf("Concurrency:", math.fsum(e2e) / D),
    ]
    sg_sections(out, e2e=rows_of(e2e, ["Mean", "Median", "P90", "P99"]))
    out.append(CLOSE)
    write("sglang-0.5.10-embedding.txt", out)
    EXPECTED["sglang-0.5.10-embedding.txt"] = {
        "true_tpot_ms": None, "tokens_per_chunk": None, "blocks": 1,
        "num_requests": R, "max_concurrency": C, "duration_s": round(D, 6),
        "total_input_tokens": total_in,
        "simulated_mean_e2e_ms": round(np_mean(e2e) * 1000, 4),
        "concurrency": round(math.fsum(e2e) / D, 4), "peak_concurrent": peak_conc,
        "notes": "sglang-embedding backend (0.5.10-0.5.13.post1 layout): generated-token, "
                 "output-throughput, peak-output and total-token rows and the TTFT/TPOT/ITL "
                 "sections are omitted; E2E rows Mean/Median/P90/P99. TPOT undefined. "
                 "Duration includes the /server_info GET ('sglang' is in the backend name). "
                 "The run is short (duration %.4f s, printed %.2f): the 2-decimal duration "
                 "alone allows about +-2.5%% on R/D. 'Peak concurrent requests: 64' exceeds "
                 "the cap of 16 because the whole run fits in one 1-s bucket." % (D, D),
    }


def sglang_multi_041():
    """0.4.1.post7 --multi: one block per rate."""
    R, n, inp = 32, 128, 512
    rates = list(range(2, 8, 2))  # parse_request_rate_range('2,8,2') -> [2, 4, 6]
    tpot_by_rate = {2: 18.0, 4: 19.0, 6: 21.0}
    out = [
        namespace(SG_NS_0417, port=30000, dataset_name='random', model='meta-llama/Llama-3.1-8B-Instruct', num_prompts=32, random_input_len=512, random_output_len=128, random_range_ratio=1.0, multi=True, request_rate_range='2,8,2', output_file='multi.jsonl'),
        "",
        f"#Input tokens: {R * inp}",
        f"#Output tokens: {R * n}",
    ]
    per_block = []
    for bi, rate in enumerate(rates):
        t = tpot_by_rate[rate]
        rng, reqs = sg_sim_plain(
            4100 + rate, R, n, t, inp, lambda rng, i: 0.047 + rng.uniform(0.0, 0.03),
            lambda rng, R, rate=rate: poisson_arrivals(rng, R, rate), None)
        lat = lambda r: r.lat_done
        D = max(r.start + lat(r) for r in reqs) + 0.005
        out += [
            "Starting initial single prompt test run...",
            "Initial test run completed. Starting main benchmark run...",
            tqdm_line(R, [r.start + lat(r) for r in reqs]),
        ]
        retok = R * n - (2 + bi)
        sglang_0041_block(out, "sglang", rate, None, reqs, D, R * inp, retok, lat)
        sm = summary(reqs, lat, Req.itl_chunks, D, t, 1, "")
        sm.pop("notes")
        sm.update(request_rate=rate, total_output_tokens_retokenized=retok)
        per_block.append(sm)
    write("sglang-multi-0.4.1.txt", out)
    EXPECTED["sglang-multi-0.4.1.txt"] = {
        "true_tpot_ms": [b["true_tpot_ms"] for b in per_block],
        "design_tpot_ms": [tpot_by_rate[r] for r in rates],
        "tokens_per_chunk": 1,
        "blocks": len(rates),
        "num_requests": R, "output_len": n, "max_concurrency": None,
        "per_block": per_block,
        "notes": "0.4.1.post7 --multi --request-rate-range 2,8,2: three blocks (rates 2, 4, 6; "
                 "'Traffic request rate:' prints the int). NOTE the real parser does "
                 "range(start, stop, step), so '2,6,2' would give only [2, 4] and a 3-value "
                 "list '2,4,6' would be read as range(2,4,6) = [2]; '2,8,2' is what yields "
                 "2, 4, 6. Same 32 input requests each time; TPOT rises with load "
                 "(18, 19, 21 ms). Native backend, ITL per chunk, 1 token per chunk. "
                 "true_tpot_ms lists one value per block in order.",
    }


def llmperf_summary():
    """ray-project/llmperf `<name>_summary.json` (not on PyPI, so never captured here): the keys of
    src/llmperf/common_metrics.py and token_benchmark_ray.py, 32 requests of 256 output tokens at 4
    concurrent, TTFT 0.2 s and E2E 5.3 s, so TPOT = (5.3 - 0.2) / 255 = 20 ms; llmperf's own
    inter_token_latency_s is E2E / N (20.7 ms, TTFT included)."""
    summary = dict([
        ('version', '2023-08-31'),
        ('name', 'rendered'),
        ('model', 'meta-llama/Llama-3.1-8B-Instruct'),
        ('mean_input_tokens', 550),
        ('stddev_input_tokens', 0),
        ('mean_output_tokens', 256),
        ('stddev_output_tokens', 0),
        ('num_concurrent_requests', 4),
        ('results_inter_token_latency_s_quantiles_p50', 0.0207),
        ('results_inter_token_latency_s_quantiles_p90', 0.0209),
        ('results_inter_token_latency_s_quantiles_p99', 0.0211),
        ('results_inter_token_latency_s_mean', 0.0207031),
        ('results_inter_token_latency_s_min', 0.0205),
        ('results_inter_token_latency_s_max', 0.0212),
        ('results_inter_token_latency_s_stddev', 0.0001),
        ('results_ttft_s_quantiles_p50', 0.199),
        ('results_ttft_s_quantiles_p90', 0.21),
        ('results_ttft_s_quantiles_p99', 0.23),
        ('results_ttft_s_mean', 0.2),
        ('results_ttft_s_min', 0.18),
        ('results_ttft_s_max', 0.231),
        ('results_ttft_s_stddev', 0.01),
        ('results_end_to_end_latency_s_quantiles_p50', 5.3),
        ('results_end_to_end_latency_s_quantiles_p90', 5.32),
        ('results_end_to_end_latency_s_quantiles_p99', 5.35),
        ('results_end_to_end_latency_s_mean', 5.3),
        ('results_end_to_end_latency_s_min', 5.27),
        ('results_end_to_end_latency_s_max', 5.36),
        ('results_end_to_end_latency_s_stddev', 0.02),
        ('results_number_output_tokens_mean', 256),
        ('results_num_requests_started', 32),
        ('results_error_rate', 0.0),
        ('results_number_errors', 0),
        ('results_num_completed_requests', 32),
        ('results_mean_output_throughput_token_per_s', 188.2),
    ])
    with open(os.path.join(HERE, "llmperf-summary.json"), "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps(summary, indent=4))
    EXPECTED["llmperf-summary.json"] = {
        "true_tpot_ms": 20.0,
        "design_tpot_ms": 20.0,
        "tokens_per_chunk": 1,
        "tool_tpot_ms": None,
        "simulated_mean_ttft_ms": 200.0,
        "simulated_mean_e2e_ms": 5300.0,
        "notes": "llmperf *_summary.json with the keys of src/llmperf/common_metrics.py: 32 requests of 256 output tokens at 4 concurrent, TTFT 0.2 s, E2E 5.3 s, so TPOT = (5.3 - 0.2) / 255 = 20 ms; its inter_token_latency_s is E2E / N = 20.7 ms (TTFT included), not a TPOT.",
        "blocks": 1,
        "num_requests": 32,
        "output_len": 256,
        "max_concurrency": 4,
        "itl_is_per_chunk": False,
    }


def main():
    vllm_script_01()
    vllm_script_04_05()
    vllm_script_061()
    vllm_080_goodput()
    vllm_0110()
    vllm_030_all()
    vllm_024_diffusion()
    vllm_029_pooling()
    vllm_017_rtfx()
    sglang_0122()
    sglang_0124()
    sglang_036()
    sglang_0041()
    sglang_042()
    sglang_053()
    sglang_0523()
    sglang_0510_embedding()
    sglang_multi_041()
    llmperf_summary()
    for name, e in EXPECTED.items():
        e.setdefault("itl_is_per_chunk", e.get("tokens_per_chunk") is not None)
        e["rendered"] = True
    with open(os.path.join(HERE, "expected.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(EXPECTED, f, indent=2, sort_keys=False)
        f.write("\n")


if __name__ == "__main__":
    main()
