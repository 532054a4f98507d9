#!/usr/bin/env python3
"""Capture `evalscope perf` against emulator.py (copied from the corpus harness).

Usage: python capture_evalscope.py SCENARIO [--endpoint-type chat|completions]
Writes /tmp/es-capture/evalscope-<scenario>.* ; paths '/tmp/' are rewritten
to '/opt/' (same length, so the table alignment is unchanged).
The emulator runs in the same venv as evalscope (it needs aiohttp and tokenizers).
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

G = "/tmp/es"
TOK = f"{G}/tokenizer"
VENV = os.path.expanduser("~/.cache/bench-normalize/evalscope-venv")
EMU_PY = f"{VENV}/bin/python"
EMU = f"{G}/emulator.py"
ES = f"{VENV}/bin/evalscope"
OUT = "/tmp/es-capture"
MODEL = "emu-llm-wordlevel"

PORTS = {"s1": 18501, "s2": 18500}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--endpoint-type", default="chat", choices=["completions", "chat"])
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args()
    sc = SCENARIOS[a.scenario]
    port = PORTS[a.scenario] + (10 if a.endpoint_type == "completions" else 0)
    name = "evalscope" + ("-completions" if a.endpoint_type == "completions" else "") + f"-{a.scenario}"
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(f"{G}/logs", exist_ok=True)
    log_path = f"{G}/logs/{name}.emulator.jsonl"
    outputs = f"{G}/outputs-{name}"
    if os.path.exists(log_path):
        os.remove(log_path)
    if os.path.exists(outputs):
        shutil.rmtree(outputs)
    endpoint = "/v1/chat/completions" if a.endpoint_type == "chat" else "/v1/completions"

    ecmd = [EMU_PY, EMU, "--host", "127.0.0.1", "--port", str(port), "--model", MODEL,
            "--tokenizer", TOK, "--tpot-ms", str(sc["tpot_ms"]), "--ttft-ms", str(sc["ttft_ms"]),
            "--prefill-ms-per-token", str(sc["prefill_ms_per_token"]),
            "--slots", "64", "--seed", "0", "--log", log_path, "--k", str(sc["k"])]
    ccmd = [ES, "perf", "--url", f"http://127.0.0.1:{port}{endpoint}", "--api", "openai",
            "--model", MODEL, "--tokenizer-path", TOK, "--dataset", "random",
            "--min-prompt-length", str(sc["input_len"]), "--max-prompt-length", str(sc["input_len"]),
            "--prefix-length", "0", "--max-tokens", str(sc["output_len"]), "--min-tokens", str(sc["output_len"]),
            "--extra-args", json.dumps({"ignore_eos": True}),
            "--parallel", str(sc["concurrency"]), "--number", str(sc["num_prompts"]), "--stream",
            "--seed", "0", "--outputs-dir", outputs, "--no-timestamp", "--name", name]
    client_env = {
        "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false", "COLUMNS": "160",
        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
        "PATH": f"{VENV}/bin:" + os.environ["PATH"],
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
        sys.stdout.write(raw.decode(errors="replace")[-6000:])
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
    for p in sorted(glob.glob(f"{outputs}/**/*", recursive=True)):
        if os.path.isdir(p):
            continue
        base = os.path.basename(p)
        if base.startswith(".") or base.endswith((".db", ".html", ".log")):
            skipped.append(f"{base} (hidden, database, log or HTML report)")
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
    truth = {
        "scenario": a.scenario,
        "description": sc["desc"],
        "client": "evalscope perf",
        "client_endpoint": endpoint,
        "client_version": pip_version(f"{VENV}/bin/python", "evalscope"),
        "client_command": neutral(shlex.join(ccmd)),
        "client_env": {k: neutral(v) if k != "PATH" else neutral(f"{VENV}/bin:") + "$PATH"
                       for k, v in client_env.items()},
        "client_returncode": cp.returncode,
        "client_wall_s": round(wall, 2),
        "emulator_command": neutral(shlex.join(ecmd)),
        **scenario_truth(sc, m),
        "measured_by_emulator": m,
        "measured_by_emulator_note": (
            f"server-side timestamps of the {sc['num_prompts']} generation requests "
            + ("(evalscope sent no other generation request)"
               if not warm else f"({n_warm} earlier request(s) excluded: the connection test before the run)")
            + "; ttft/e2e are from request arrival to the write of the first/last token chunk; done = after data: [DONE]; decode = first->last chunk; tpot = decode/(tokens-1); chunk gap = decode/(chunks-1)"),
        "excluded_warmup_requests": (summarize(warm) if warm else None),
        "exports_saved": saved,
        "exports_skipped": skipped,
        "paths_note": "every '/tmp/' in the console text, the exports and the commands was rewritten to '/opt/' (same byte length, so the table alignment is unchanged); the real run used /tmp/es/...",
    }
    with open(f"{OUT}/{name}.truth.json", "w") as f:
        json.dump(truth, f, indent=2)
    print(json.dumps(m, indent=1))


if __name__ == "__main__":
    main()
