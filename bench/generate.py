#!/usr/bin/env python3
"""Generate the benchmark inputs of bench/run.sh (Python 3 standard library only).

    python3 bench/generate.py [OUT_DIR] [--mb 200] [--noise 0.8] [--requests 100000] [--seed 20250828]
                              [--log-name big]

OUT_DIR defaults to bench/out/ (git-ignored). Writes:

  big.log                 ~--mb MB of log: the repository's real sample logs (samples/captured,
                          samples/versions: whole files, with their own tqdm bars, warnings,
                          Namespace dumps; samples/public: the published blocks), separated by
                          synthetic noise typical of real logs (vLLM / SGLang server log runs,
                          uvicorn access lines, tqdm progress lines with '\\r', Python tracebacks,
                          Namespace(...) dumps, ANSI colour codes, sweep-script lines). About
                          --noise of the bytes are outside result blocks.
  big.meta.json           block count (lines containing 'Serving Benchmark Result'), bytes,
                          noise share, parameters.
  detailed.json           a vLLM `--save-result --save-detailed` result file with --requests
                          requests (one JSON object, no trailing newline, as json.dump writes it),
                          the structure of a real captured vLLM 0.33 result file, scaled.
  detailed.expected.json  the expected per-request TPOT, (latency_i - ttft_i) / (output_len_i - 1),
                          request-weighted mean, p50, p99, in ms.

--log-name NAME writes NAME.log and NAME.meta.json instead (bench/run.sh also makes dense.log,
--noise 0: the samples back to back, and server.log, --noise 0.99: a server log with a few
blocks). Prints the block count of the log as `blocks: N`. Deterministic: the same arguments give the
same bytes. --only log|json generates one of the two.
"""

import argparse
import heapq
import json
import math
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BANNER = "Serving Benchmark Result"

# --------------------------------------------------------------------------------------------
# big.log
# --------------------------------------------------------------------------------------------

SAMPLE_DIRS = ["samples/captured", "samples/versions", "samples/public"]
END_RE = re.compile(r"^=+\s*$")


def load_samples():
    """(name, text, block_bytes, blocks) for every sample log, in a fixed order."""
    out = []
    for d in SAMPLE_DIRS:
        full = os.path.join(REPO, d)
        if not os.path.isdir(full):
            continue
        for name in sorted(os.listdir(full)):
            if not (name.endswith(".stdout.txt") or (d.endswith("public") and name.endswith(".txt"))):
                continue
            with open(os.path.join(full, name), "r", encoding="utf-8", newline="") as f:
                text = f.read()
            if not text.endswith("\n"):
                text += "\n"
            blocks = 0
            block_bytes = 0
            inside = False
            for line in text.split("\n"):
                if BANNER in line:
                    inside = True
                    blocks += 1
                if inside:
                    block_bytes += len(line.encode("utf-8")) + 1
                    if END_RE.match(line):
                        inside = False
            if blocks:
                out.append((f"{d}/{name}", text, block_bytes, blocks))
    if not out:
        sys.exit(f"generate.py: no sample logs found under {REPO}/samples")
    return out


def namespace_templates(samples):
    """The real Namespace(...) dumps of the samples (to be varied)."""
    t = []
    for _, text, _, _ in samples:
        for line in text.split("\n"):
            if "Namespace(" in line and len(line) > 500:
                t.append(line)
    return t


class Noise:
    """Synthetic log noise. Never contains the banner, a line of '=' only, or a line the
    parsers read as a run (`Total time: ... s`) or as a run's preamble."""

    MODELS = ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-72B-Instruct",
              "deepseek-ai/DeepSeek-V3", "mistralai/Mistral-7B-Instruct-v0.3",
              "/models/llama-3.3-70b-fp8", "openai/gpt-oss-120b"]
    TQDM_BAR = " ▏▎▍▌▋▊▉█"

    def __init__(self, rng, namespaces):
        self.rng = rng
        self.namespaces = namespaces or []
        self.t = 1724884888  # a fixed epoch second, advanced as lines are written
        self.pid = 2345
        self.port = 51000

    # -- helpers ---------------------------------------------------------------------------
    def _tick(self, s=None):
        self.t += s if s is not None else self.rng.choice((0, 0, 1, 1, 5, 10))
        t = self.t
        days = t // 86400
        mon = 1 + (days // 28) % 12
        day = 1 + days % 28
        return mon, day, (t // 3600) % 24, (t // 60) % 60, t % 60

    def _vllm_ts(self):
        mon, day, h, m, s = self._tick()
        return f"{mon:02d}-{day:02d} {h:02d}:{m:02d}:{s:02d}"

    def _iso_ts(self):
        mon, day, h, m, s = self._tick()
        return f"2025-{mon:02d}-{day:02d} {h:02d}:{m:02d}:{s:02d}"

    # -- chunk kinds ------------------------------------------------------------------------
    def vllm_server_run(self, n):
        r = self.rng
        colour = r.random() < 0.3
        v1 = r.random() < 0.6
        pid = self.pid + r.randrange(50)
        out = []
        running = r.randrange(1, 257)
        for _ in range(n):
            ts = self._vllm_ts()
            if v1:
                pre = f"(APIServer pid={pid}) "
                if colour:
                    pre = f"\x1b[1;36m(APIServer pid={pid})\x1b[0;0m "
            else:
                pre = ""
            lvl = "\x1b[32mINFO\x1b[0m" if colour else "INFO"
            x = r.random()
            running = max(0, min(512, running + r.randrange(-8, 9)))
            if x < 0.55:
                gen = r.uniform(50, 9000)
                prm = r.choice((0.0, 0.0, r.uniform(100, 60000)))
                kv = r.uniform(0, 95)
                if v1:
                    out.append(f"{pre}{lvl} {ts} [loggers.py:123] Engine 000: Avg prompt throughput: "
                               f"{prm:.1f} tokens/s, Avg generation throughput: {gen:.1f} tokens/s, "
                               f"Running: {running} reqs, Waiting: {r.randrange(0, 40)} reqs, "
                               f"GPU KV cache usage: {kv:.1f}%, Prefix cache hit rate: {r.uniform(0, 90):.1f}%")
                else:
                    out.append(f"{lvl} {ts} [metrics.py:351] Avg prompt throughput: {prm:.1f} tokens/s, "
                               f"Avg generation throughput: {gen:.1f} tokens/s, Running: {running} reqs, "
                               f"Swapped: 0 reqs, Pending: {r.randrange(0, 40)} reqs, GPU KV cache usage: "
                               f"{kv:.1f}%, CPU KV cache usage: 0.0%.")
            elif x < 0.92:
                self.port = 40000 + (self.port + 7) % 25000
                ep = r.choice(("/v1/completions", "/v1/chat/completions", "/v1/completions", "/metrics"))
                out.append(f"{pre}INFO:     127.0.0.1:{self.port} - \"POST {ep} HTTP/1.1\" 200 OK"
                           if ep != "/metrics" else
                           f"{pre}INFO:     127.0.0.1:{self.port} - \"GET /metrics HTTP/1.1\" 200 OK")
            elif x < 0.97:
                out.append(f"{pre}{lvl} {ts} [logger.py:43] Received request cmpl-"
                           f"{r.getrandbits(128):032x}-0: prompt: '', params: SamplingParams(n=1, "
                           f"presence_penalty=0.0, frequency_penalty=0.0, repetition_penalty=1.0, "
                           f"temperature=1.0, top_p=1.0, top_k=0, min_p=0.0, seed=None, stop=[], "
                           f"stop_token_ids=[], bad_words=[], include_stop_str_in_output=False, "
                           f"ignore_eos=True, max_tokens={r.choice((128, 256, 512, 1024))}, min_tokens=0, "
                           f"logprobs=None, prompt_logprobs=None, skip_special_tokens=True), "
                           f"prompt_token_ids: None, lora_request: None.")
            else:
                wl = "\x1b[33mWARNING\x1b[0m" if colour else "WARNING"
                out.append(f"{pre}{wl} {ts} [scheduler.py:1560] Sequence group "
                           f"{r.randrange(10**6)} is preempted by PreemptionMode.RECOMPUTE mode because "
                           f"there is not enough KV cache space. This can affect the end-to-end performance. "
                           f"Increase gpu_memory_utilization or tensor_parallel_size to provide more KV "
                           f"cache memory. total_num_cumulative_preemption={r.randrange(1, 500)}")
        return "\n".join(out) + "\n"

    def sglang_server_run(self, n):
        r = self.rng
        tp = r.random() < 0.5
        out = []
        running = r.randrange(1, 257)
        for _ in range(n):
            ts = self._iso_ts()
            tag = f"[{ts} TP{r.randrange(8)}]" if tp else f"[{ts}]"
            x = r.random()
            running = max(0, min(512, running + r.randrange(-8, 9)))
            if x < 0.6:
                out.append(f"{tag} Decode batch. #running-req: {running}, #token: {running * r.randrange(300, 1500)}, "
                           f"token usage: {r.uniform(0, 0.95):.2f}, cuda graph: {r.choice(('True', 'False'))}, "
                           f"gen throughput (token/s): {r.uniform(30, 9000):.2f}, #queue-req: {r.randrange(0, 60)}, ")
            elif x < 0.8:
                out.append(f"{tag} Prefill batch. #new-seq: {r.randrange(1, 9)}, #new-token: {r.randrange(1, 16384)}, "
                           f"#cached-token: {r.randrange(0, 4096)}, token usage: {r.uniform(0, 0.95):.2f}, "
                           f"#running-req: {running}, #queue-req: {r.randrange(0, 60)}, ")
            else:
                self.port = 40000 + (self.port + 7) % 25000
                out.append(f"[{ts}] INFO:     127.0.0.1:{self.port} - \"POST /generate HTTP/1.1\" 200 OK")
        return "\n".join(out) + "\n"

    def tqdm_line(self):
        r = self.rng
        total = r.choice((16, 64, 100, 200, 500, 1000, 1000, 2000, 5000))
        steps = min(total, r.randrange(5, 400))
        parts = [f"\r  0%|          | 0/{total} [00:00<?, ?it/s]"]
        el = 0.0
        done = 0
        for i in range(1, steps + 1):
            done = total * i // steps
            el += r.uniform(0.1, 3.0)
            frac = done / total
            full = int(frac * 10)
            rem = int((frac * 10 - full) * 8)
            bar = "█" * full + (self.TQDM_BAR[rem] if full < 10 else "")
            bar = bar.ljust(10)
            rate = done / el if el else 0.0
            left = (total - done) / rate if rate else 0.0
            parts.append(f"\r{int(frac * 100):3d}%|{bar}| {done}/{total} [{int(el) // 60:02d}:{int(el) % 60:02d}"
                         f"<{int(left) // 60:02d}:{int(left) % 60:02d}, {rate:6.2f}it/s]")
        return "".join(parts) + "\n"

    def traceback(self):
        r = self.rng
        port = r.choice((8000, 30000, 18000))
        kind = r.randrange(3)
        if kind == 0:
            return (
                "Traceback (most recent call last):\n"
                "  File \"/opt/venv/lib/python3.12/site-packages/aiohttp/connector.py\", line 1268, in _wrap_create_connection\n"
                "    sock = await aiohappyeyeballs.start_connection(\n"
                "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
                "  File \"/opt/venv/lib/python3.12/site-packages/aiohappyeyeballs/impl.py\", line 122, in start_connection\n"
                "    raise first_exception\n"
                "  File \"/opt/venv/lib/python3.12/site-packages/aiohappyeyeballs/impl.py\", line 73, in start_connection\n"
                "    sock = await _connect_sock(\n"
                "           ^^^^^^^^^^^^^^^^^^^^\n"
                "  File \"/usr/lib/python3.12/asyncio/selector_events.py\", line 691, in sock_connect\n"
                "    return await fut\n"
                "           ^^^^^^^^^\n"
                f"ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', {port})\n"
                "\n"
                "The above exception was the direct cause of the following exception:\n"
                "\n"
                "Traceback (most recent call last):\n"
                "  File \"/opt/venv/lib/python3.12/site-packages/vllm/benchmarks/lib/endpoint_request_func.py\", line 231, in async_request_openai_completions\n"
                "    async with session.post(url=api_url, json=payload, headers=headers) as response:\n"
                "  File \"/opt/venv/lib/python3.12/site-packages/aiohttp/client.py\", line 1425, in __aenter__\n"
                "    self._resp: _RetType = await self._coro\n"
                "                           ^^^^^^^^^^^^^^^^\n"
                "  File \"/opt/venv/lib/python3.12/site-packages/aiohttp/client.py\", line 703, in _request\n"
                "    conn = await self._connector.connect(\n"
                "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
                f"aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host 127.0.0.1:{port} "
                f"ssl:default [Connect call failed ('127.0.0.1', {port})]\n")
        if kind == 1:
            ts = self._vllm_ts()
            return (
                f"ERROR {ts} [engine.py:160] RuntimeError('CUDA error: an illegal memory access was encountered')\n"
                f"ERROR {ts} [engine.py:160] Traceback (most recent call last):\n"
                f"ERROR {ts} [engine.py:160]   File \"/opt/venv/lib/python3.12/site-packages/vllm/engine/multiprocessing/engine.py\", line 158, in start\n"
                f"ERROR {ts} [engine.py:160]     self.run_engine_loop()\n"
                f"ERROR {ts} [engine.py:160]   File \"/opt/venv/lib/python3.12/site-packages/vllm/engine/multiprocessing/engine.py\", line 221, in run_engine_loop\n"
                f"ERROR {ts} [engine.py:160]     request_outputs = self.engine_step()\n"
                f"ERROR {ts} [engine.py:160]                       ^^^^^^^^^^^^^^^^^^\n"
                f"ERROR {ts} [engine.py:160]   File \"/opt/venv/lib/python3.12/site-packages/vllm/worker/model_runner.py\", line 1742, in execute_model\n"
                f"ERROR {ts} [engine.py:160]     output: SamplerOutput = self.model.sample(\n"
                f"ERROR {ts} [engine.py:160] RuntimeError: CUDA error: an illegal memory access was encountered\n"
                f"ERROR {ts} [engine.py:160] CUDA kernel errors might be asynchronously reported at some other API call, "
                f"so the stacktrace below might be incorrect.\n"
                f"ERROR {ts} [engine.py:160] For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")
        return (
            "Traceback (most recent call last):\n"
            "  File \"<frozen runpy>\", line 198, in _run_module_as_main\n"
            "  File \"<frozen runpy>\", line 88, in _run_code\n"
            "  File \"/opt/venv-sglang/lib/python3.11/site-packages/sglang/bench_serving.py\", line 2391, in <module>\n"
            "    run_benchmark(args)\n"
            "  File \"/opt/venv-sglang/lib/python3.11/site-packages/sglang/bench_serving.py\", line 2087, in run_benchmark\n"
            "    return asyncio.run(\n"
            "           ^^^^^^^^^^^^\n"
            "  File \"/usr/lib/python3.11/asyncio/runners.py\", line 190, in run\n"
            "    return runner.run(main)\n"
            "           ^^^^^^^^^^^^^^^^\n"
            "  File \"/opt/venv-sglang/lib/python3.11/site-packages/sglang/bench_serving.py\", line 1702, in benchmark\n"
            "    raise ValueError(\n"
            f"ValueError: Initial test run failed - Please make sure benchmark arguments are correctly "
            f"specified. Error: Cannot connect to host 127.0.0.1:{port}\n")

    def namespace(self):
        r = self.rng
        if self.namespaces and r.random() < 0.7:
            line = r.choice(self.namespaces)
            line = re.sub(r"\bport=\d+", f"port={r.choice((8000, 30000, 18000, 8080))}", line)
            line = re.sub(r"\bseed=\d+", f"seed={r.randrange(100)}", line)
            line = re.sub(r"\bnum_prompts=\d+", f"num_prompts={r.choice((100, 500, 1000, 2000))}", line)
            line = re.sub(r"\bmax_concurrency=\d+", f"max_concurrency={r.choice((1, 4, 16, 64, 256))}", line)
            return line + "\n"
        # ~2 KB synthetic dump
        keys = ["backend='vllm'", "base_url=None", "host='127.0.0.1'", f"port={r.choice((8000, 30000))}",
                "endpoint='/v1/completions'", "dataset=None", "dataset_name='sharegpt'",
                "dataset_path='/data/ShareGPT_V3_unfiltered_cleaned_split.json'",
                f"max_concurrency={r.choice((1, 4, 16, 64, 256))}", f"model='{r.choice(self.MODELS)}'",
                "tokenizer=None", "use_beam_search=False", f"num_prompts={r.choice((100, 1000))}",
                "logprobs=None", "request_rate=inf", "burstiness=1.0", f"seed={r.randrange(100)}",
                "trust_remote_code=False", "disable_tqdm=False", "profile=False", "save_result=True",
                "save_detailed=False", "metadata=None", "result_dir=None", "result_filename=None",
                "ignore_eos=False", "percentile_metrics='ttft,tpot,itl'", "metric_percentiles='99'",
                "goodput=None", "sonnet_input_len=550", "sonnet_output_len=150", "sonnet_prefix_len=200",
                "sharegpt_output_len=None", "random_input_len=1024", "random_output_len=128",
                "random_range_ratio=0.0", "random_prefix_len=0", "hf_subset=None", "hf_split=None",
                "hf_output_len=None", "top_p=None", "top_k=None", "min_p=None", "temperature=None",
                "tokenizer_mode='auto'", "served_model_name=None", "lora_modules=None",
                "ramp_up_strategy=None", "ramp_up_start_rps=None", "ramp_up_end_rps=None"]
        body = ", ".join(keys)
        while len(body) < 1900:
            body += f", extra_arg_{r.randrange(1000)}={r.choice(('None', 'False', 'True', repr('auto')))}"
        return f"Namespace({body})\n"

    def misc(self):
        r = self.rng
        ts = self._vllm_ts()
        iso = self._iso_ts()
        c = r.choice((1, 4, 8, 16, 32, 64, 128, 256))
        choices = [
            f"+ vllm bench serve --model {r.choice(self.MODELS)} --dataset-name random --random-input-len 1024 "
            f"--random-output-len 1024 --num-prompts {c * 10} --max-concurrency {c} --save-result\n",
            f"+ python3 -m sglang.bench_serving --backend sglang --dataset-name random --num-prompts {c * 10} "
            f"--max-concurrency {c} --random-input-len 1024 --random-output-len 1024\n",
            f"===== sweep step: concurrency={c} =====\n",
            f"--- run {r.randrange(1, 99)} of 99 (c={c}) ---\n",
            f"\x1b[33mWARNING\x1b[0m {ts} [api_server.py:1024] Default sampling parameters have been overridden "
            f"by the model's Hugging Face generation config recommended from the model creator.\n",
            f"/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:61: FutureWarning: The pynvml package "
            f"is deprecated. Please install nvidia-ml-py instead.\n  import pynvml  # type: ignore[import]\n",
            f"\x1b[32m{iso}.{r.randrange(1000):03d}\x1b[0m | \x1b[1mINFO    \x1b[0m | "
            f"\x1b[36mbench.sweep\x1b[0m:\x1b[36mrun\x1b[0m:\x1b[36m{r.randrange(10, 400)}\x1b[0m - "
            f"\x1b[1mstarting client, concurrency={c}\x1b[0m\n",
            f"INFO {ts} [__init__.py:239] Automatically detected platform cuda.\n",
            f"[{iso}] Endpoint '/get_model_info' is deprecated and will be removed in a future version. "
            f"Please use '/model_info' instead.\n",
            "tip: install termplotlib and gnuplot to plot the metrics\n",
            f"Waiting for server at http://127.0.0.1:{r.choice((8000, 30000))} ...\n",
            f"Server ready after {r.randrange(30, 600)} s\n",
            "\n",
        ]
        return r.choice(choices)

    def chunk(self, budget):
        """One piece of noise, roughly up to `budget` bytes (long server-log runs are capped
        by budget, small pieces are not)."""
        r = self.rng
        x = r.random()
        if x < 0.30:
            n = max(1, min(int(budget / 230), r.randrange(5, 400)))
            return self.vllm_server_run(n)
        if x < 0.45:
            n = max(1, min(int(budget / 190), r.randrange(5, 400)))
            return self.sglang_server_run(n)
        if x < 0.60:
            return self.tqdm_line()
        if x < 0.67:
            return self.traceback()
        if x < 0.75:
            return self.namespace()
        return self.misc()

    def long_run(self):
        r = self.rng
        n = r.randrange(300, 3000)
        return self.vllm_server_run(n) if r.random() < 0.6 else self.sglang_server_run(n)


def generate_log(path, mb, noise_share, seed):
    rng = random.Random(seed)
    samples = load_samples()
    noise = Noise(rng, namespace_templates(samples))
    target = int(mb * 1024 * 1024)
    total = 0
    block_bytes = 0
    blocks = 0
    noise_bytes = 0
    per_source = {}
    with open(path, "wb") as f:
        def put(s):
            b = s.encode("utf-8")
            f.write(b)
            return len(b)

        while total < target:
            # noise before the next sample: keep the noise share near the target on average
            want_noise = (block_bytes + 1700) * noise_share / (1.0 - noise_share)
            deficit = want_noise - noise_bytes
            # now and then a long server-log run (~60-700 KB); none in a log without noise
            if noise_share > 0 and rng.random() < 0.005:
                n = put(noise.long_run())
                noise_bytes += n
                total += n
            elif deficit > 0:
                budget = deficit * rng.uniform(0.3, 1.7)
                spent = 0
                while spent < budget:
                    n = put(noise.chunk(budget - spent))
                    spent += n
                noise_bytes += spent
                total += spent
            name, text, bb, nb = samples[rng.randrange(len(samples))]
            n = put(text)
            total += n
            block_bytes += bb
            noise_bytes += n - bb
            blocks += nb
            per_source[name] = per_source.get(name, 0) + 1
    meta = {
        "file": os.path.basename(path),
        "bytes": total,
        "blocks": blocks,
        "block_bytes": block_bytes,
        "noise_bytes": noise_bytes,
        "noise_share": round(noise_bytes / total, 4),
        "samples_used": len(per_source),
        "params": {"mb": mb, "noise": noise_share, "seed": seed},
    }
    return meta


# --------------------------------------------------------------------------------------------
# detailed.json
# --------------------------------------------------------------------------------------------

# Structure of /work/shared/corpus/captured/vllm-s2.result.json (vllm bench serve 0.33.0,
# --save-result --save-detailed, --percentile-metrics ttft,tpot,itl,e2el, --metric-percentiles 99):
# top-level keys in this order; per-request arrays in seconds.
VLLM_KEYS = [
    "date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts",
    "request_rate", "burstiness", "max_concurrency", "duration", "completed", "failed",
    "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput",
    "output_throughput", "total_token_throughput", "input_lens", "output_lens", "ttfts", "itls",
    "latencies", "start_times", "queue_times", "generated_texts", "errors",
    "max_output_tokens_per_s", "max_concurrent_requests", "rtfx",
    "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms",
    "mean_tpot_ms", "median_tpot_ms", "std_tpot_ms", "p99_tpot_ms",
    "mean_itl_ms", "median_itl_ms", "std_itl_ms", "p99_itl_ms",
    "mean_e2el_ms", "median_e2el_ms", "std_e2el_ms", "p99_e2el_ms",
]


def percentile(sorted_xs, p):
    """numpy.percentile's default (linear interpolation), as vLLM uses."""
    if not sorted_xs:
        return 0.0
    k = (len(sorted_xs) - 1) * p / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (k - lo)


def stats_ms(xs):
    """(mean, median, std, p99) in ms, as numpy would compute them (population std)."""
    n = len(xs)
    mean = math.fsum(xs) / n
    var = math.fsum((x - mean) ** 2 for x in xs) / n
    s = sorted(xs)
    return mean * 1000, percentile(s, 50) * 1000, math.sqrt(var) * 1000, percentile(s, 99) * 1000


def generate_detailed(path, expected_path, requests, seed, concurrency=64):
    rng = random.Random(seed + 1)
    # word-level emulator text, as in the captured files: 4-letter words, one per token
    cons, vows = "bdfgklmnprstvz", "aeiou"
    pool_words = [rng.choice(cons) + rng.choice(vows) + rng.choice(cons) + rng.choice(vows) for _ in range(8192)]
    pool = "".join(" " + w for w in pool_words)  # 5 chars per token

    input_lens, output_lens, ttfts, itls, latencies = [], [], [], [], []
    start_times, queue_times, texts, errors, tpots = [], [], [], [], []
    slots = [1107.43 + i * 1e-4 for i in range(concurrency)]
    heapq.heapify(slots)
    first_start = slots[0]
    last_end = 0.0
    uniform, randrange, random_ = rng.uniform, rng.randrange, rng.random
    for _ in range(requests):
        n = randrange(128, 513)
        ttft = uniform(0.05, 0.2)
        tpot = uniform(0.008, 0.03)  # this request's true decode time per token
        chunk_itls = []
        left = n - 1  # the first chunk carries the first token
        while left > 0:
            k = randrange(1, 5)
            if k > left:
                k = left
            left -= k
            chunk_itls.append(k * tpot * (0.9 + 0.2 * random_()))
        lat = ttft + math.fsum(chunk_itls)
        st = heapq.heappop(slots)
        qt = uniform(0.0, 0.002)
        start_times.append(st)
        end = st + qt + lat
        heapq.heappush(slots, end + 0.0005)
        if end > last_end:
            last_end = end
        input_lens.append(randrange(512, 2049))
        output_lens.append(n)
        ttfts.append(ttft)
        itls.append(chunk_itls)
        latencies.append(lat)
        queue_times.append(qt)
        off = 5 * randrange(0, 8192 - 512)
        texts.append(pool[off:off + 5 * n])
        errors.append("")
        tpots.append((lat - ttft) / (n - 1))
    duration = last_end - first_start
    total_out = sum(output_lens)
    total_in = sum(input_lens)
    flat_itls = [x for l in itls for x in l]
    t_ttft, t_tpot, t_itl, t_e2e = stats_ms(ttfts), stats_ms(tpots), stats_ms(flat_itls), stats_ms(latencies)
    del flat_itls
    res = {
        "date": "20250828-224128", "endpoint_type": "openai", "backend": "openai", "label": None,
        "model_id": "meta-llama/Llama-3.1-8B-Instruct", "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
        "num_prompts": requests, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": concurrency,
        "duration": duration, "completed": requests, "failed": 0,
        "total_input_tokens": total_in, "total_output_tokens": total_out,
        "request_throughput": requests / duration, "request_goodput": None,
        "output_throughput": total_out / duration, "total_token_throughput": (total_in + total_out) / duration,
        "input_lens": input_lens, "output_lens": output_lens, "ttfts": ttfts, "itls": itls,
        "latencies": latencies, "start_times": start_times, "queue_times": queue_times,
        "generated_texts": texts, "errors": errors,
        "max_output_tokens_per_s": float(round(total_out / duration * 1.3)),
        "max_concurrent_requests": concurrency, "rtfx": 0.0,
    }
    for m, t in (("ttft", t_ttft), ("tpot", t_tpot), ("itl", t_itl), ("e2el", t_e2e)):
        res[f"mean_{m}_ms"], res[f"median_{m}_ms"], res[f"std_{m}_ms"], res[f"p99_{m}_ms"] = t
    assert list(res) == VLLM_KEYS
    with open(path, "w", encoding="utf-8") as f:
        json.dump(res, f)  # as vLLM writes it: one object, no indentation, no trailing newline
    s = sorted(tpots)
    expected = {
        "file": os.path.basename(path),
        "bytes": os.path.getsize(path),
        "requests": requests,
        "successful_requests": requests,
        "output_tokens": total_out,
        "chunks": sum(len(l) for l in itls),
        "tpot_ms": {
            "definition": "per request (latency_i - ttft_i) / (output_len_i - 1), request-weighted",
            "mean": math.fsum(tpots) / len(tpots) * 1000,
            "p50": percentile(s, 50) * 1000,
            "p99": percentile(s, 99) * 1000,
        },
        "params": {"requests": requests, "seed": seed, "concurrency": concurrency},
    }
    with open(expected_path, "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    return expected


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", default=os.path.join(HERE, "out"))
    ap.add_argument("--mb", type=float, default=200.0, help="size of big.log in MiB (default 200)")
    ap.add_argument("--noise", type=float, default=0.8, help="share of big.log bytes outside result blocks")
    ap.add_argument("--requests", type=int, default=100_000, help="requests in detailed.json")
    ap.add_argument("--seed", type=int, default=20250828)
    ap.add_argument("--only", choices=("log", "json"), help="generate only big.log or only detailed.json")
    ap.add_argument("--log-name", default="big", help="the log's file name without .log (default big): "
                    "NAME.log and NAME.meta.json")
    a = ap.parse_args()
    if not 0.0 <= a.noise < 1.0:
        ap.error("--noise must be in [0, 1)")
    os.makedirs(a.out, exist_ok=True)
    if a.only in (None, "log"):
        meta = generate_log(os.path.join(a.out, a.log_name + ".log"), a.mb, a.noise, a.seed)
        with open(os.path.join(a.out, a.log_name + ".meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        print(f"{a.log_name}.log: {meta['bytes'] / 1e6:.1f} MB, {meta['noise_share'] * 100:.1f}% noise, "
              f"from {meta['samples_used']} sample logs", file=sys.stderr)
        print(f"blocks: {meta['blocks']}")
    if a.only in (None, "json"):
        exp = generate_detailed(os.path.join(a.out, "detailed.json"),
                                os.path.join(a.out, "detailed.expected.json"), a.requests, a.seed)
        print(f"detailed.json: {exp['bytes'] / 1e6:.1f} MB, {exp['requests']} requests, "
              f"{exp['chunks']} chunks, mean TPOT {exp['tpot_ms']['mean']:.4f} ms", file=sys.stderr)
        print(f"requests: {exp['requests']}")


if __name__ == "__main__":
    main()
