#!/usr/bin/env python3
"""Capture genai-perf 0.0.16 against emulator.py (copied from the corpus harness).

Usage: python capture_genaiperf.py SCENARIO [--endpoint-type completions|chat]
Writes /tmp/genai-capture/genaiperf-<scenario>.* ; paths '/tmp/' are rewritten
to '/opt/' (same length, so console alignment is unchanged).
"""
import argparse
import glob
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

from emulated import SCENARIOS, neutral, pip_version, scenario_truth, summarize, wait_ready

G = "/tmp/genai"
TOK = f"{G}/tokenizer"
EMU_PY = f"{G}/venv-emu/bin/python"
EMU = f"{G}/emulator.py"
GP = f"{G}/venv/bin/genai-perf"
OUT = "/tmp/genai-capture"
MODEL = "emu-llm-wordlevel"

PORTS = {"s1": 18401, "s2": 18400}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--endpoint-type", default="completions", choices=["completions", "chat"])
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args()
    sc = SCENARIOS[a.scenario]
    port = PORTS[a.scenario] + (10 if a.endpoint_type == "chat" else 0)
    name = "genaiperf" + ("-chat" if a.endpoint_type == "chat" else "") + f"-{a.scenario}"
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(f"{G}/logs", exist_ok=True)
    log_path = f"{G}/logs/{name}.emulator.jsonl"
    art = f"{G}/run-{a.scenario}" + ("-chat" if a.endpoint_type == "chat" else "")
    for p in (log_path,):
        if os.path.exists(p):
            os.remove(p)
    if os.path.exists(art):
        shutil.rmtree(art)
    data_file = f"{G}/data/emu_prompts_{sc['input_len']}.jsonl"

    ecmd = [EMU_PY, EMU, "--host", "127.0.0.1", "--port", str(port), "--model", MODEL,
            "--tokenizer", TOK, "--tpot-ms", str(sc["tpot_ms"]), "--ttft-ms", str(sc["ttft_ms"]),
            "--prefill-ms-per-token", str(sc["prefill_ms_per_token"]),
            "--slots", "64", "--seed", "0", "--log", log_path, "--k", str(sc["k"])]
    ccmd = [GP, "profile", "-m", MODEL, "--tokenizer", TOK,
            "--url", f"http://127.0.0.1:{port}", "--endpoint-type", a.endpoint_type, "--streaming",
            "--input-file", data_file,
            "--synthetic-input-tokens-mean", str(sc["input_len"]), "--synthetic-input-tokens-stddev", "0",
            "--output-tokens-mean", str(sc["output_len"]), "--output-tokens-stddev", "0",
            "--extra-inputs", f"max_tokens:{sc['output_len']}", "--extra-inputs", "ignore_eos:true",
            "--concurrency", str(sc["concurrency"]), "--request-count", str(sc["num_prompts"]),
            "--random-seed", "0", "--artifact-dir", art]
    client_env = {
        "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false", "COLUMNS": "160",
        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
        "PATH": f"{G}/venv/bin:" + os.environ["PATH"],
        "LD_LIBRARY_PATH": f"{G}/sysroot/usr/lib/x86_64-linux-gnu:"
                           f"{G}/venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib",
    }
    elog = open(f"{G}/logs/{name}.emulator.out", "w")
    emu = subprocess.Popen(ecmd, stdout=elog, stderr=subprocess.STDOUT)
    try:
        wait_ready(port, emu)
        env = dict(os.environ, **client_env)
        env.pop("OPENAI_API_KEY", None)
        print("$ " + shlex.join(ccmd), flush=True)
        t0 = time.time()
        cp = subprocess.run(ccmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=env, timeout=a.timeout, cwd=G)
        wall = time.time() - t0
        raw = cp.stdout
        with open(f"{G}/logs/{name}.stdout.raw.txt", "wb") as f:
            f.write(raw)
        sys.stdout.write(raw.decode(errors="replace")[-4000:])
        print(f"[client rc={cp.returncode} wall={wall:.1f}s]")
    finally:
        emu.send_signal(signal.SIGINT)
        try:
            emu.wait(10)
        except subprocess.TimeoutExpired:
            emu.kill()
            emu.wait()
        elog.close()

    # console, byte for byte except /tmp/ -> /opt/ (same length)
    with open(f"{OUT}/{name}.stdout.txt", "wb") as f:
        f.write(raw.replace(b"/tmp/", b"/opt/"))

    saved, skipped = [], []
    for p in sorted(glob.glob(f"{art}/**/*", recursive=True)):
        if os.path.isdir(p):
            continue
        base = os.path.basename(p)
        if base.startswith("."):
            skipped.append(f"{base} (hidden file)")
            continue
        dst = f"{name}.{base}"
        with open(p, "rb") as f:
            content = f.read()
        with open(f"{OUT}/{dst}", "wb") as f:
            f.write(content.replace(b"/tmp/", b"/opt/"))
        saved.append(dst)
    shutil.copy(log_path, f"{OUT}/{name}.emulator.jsonl")

    recs = [json.loads(l) for l in open(log_path)]
    gen = sorted((r for r in recs if r.get("endpoint") in ("completions", "chat", "generate")),
                 key=lambda r: r["idx"])
    n_warm = len(gen) - sc["num_prompts"]
    assert n_warm >= 0, (len(gen), sc["num_prompts"])
    warm, main_recs = gen[:n_warm], gen[n_warm:]
    m = summarize(main_recs)
    pa_path = f"{G}/venv/bin/perf_analyzer"
    pa_ver = subprocess.run([pa_path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, **client_env)).stdout.strip()
    truth = {
        "scenario": a.scenario,
        "description": sc["desc"],
        "client": "genai-perf profile",
        "client_endpoint": "/v1/completions" if a.endpoint_type == "completions" else "/v1/chat/completions",
        "client_version": pip_version(f"{G}/venv/bin/python", "genai-perf"),
        "client_perf_analyzer": f"{pa_ver} (binary from the PyPI wheel tritonclient=="
                                f"{pip_version(f'{G}/venv/bin/python', 'tritonclient')} manylinux1_x86_64; "
                                "the PyPI package perf-analyzer 0.1.0 is an empty placeholder)",
        "client_command": neutral(shlex.join(ccmd)),
        "client_env": {k: neutral(v) if k != "PATH" else neutral(f"{G}/venv/bin:") + "$PATH"
                       for k, v in client_env.items()},
        "client_returncode": cp.returncode,
        "client_wall_s": round(wall, 2),
        "emulator_command": neutral(shlex.join(ecmd)),
        **scenario_truth(sc, m),
        "measured_by_emulator": m,
        "measured_by_emulator_note": (
            f"server-side timestamps of the {sc['num_prompts']} generation requests "
            + ("(genai-perf sent no warm-up request: --warmup-request-count defaults to 0, and perf_analyzer sent exactly --request-count requests)"
               if not warm else f"({n_warm} warm-up request(s) excluded)")
            + "; ttft/e2e are from request arrival to the write of the first/last token chunk; done = after data: [DONE]; decode = first->last chunk; tpot = decode/(tokens-1); chunk gap = decode/(chunks-1)"),
        "excluded_warmup_requests": (summarize(warm) if warm else None),
        "exports_saved": saved,
        "exports_skipped": skipped,
        "paths_note": "every '/tmp/' in the console text, the exports and the commands was rewritten to '/opt/' (same byte length, so Rich's column alignment is unchanged); the real run used /tmp/genai/...",
    }
    with open(f"{OUT}/{name}.truth.json", "w") as f:
        json.dump(truth, f, indent=2)
    print(json.dumps(m, indent=1))


if __name__ == "__main__":
    main()
