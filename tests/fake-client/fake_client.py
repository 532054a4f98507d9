"""A stand-in for a benchmark client, for tests/it/run.rs: no GPU, no server, no real client.

It prints a captured client's output (`$FAKE_SAMPLE.stdout.txt`, a path without the suffix) and
writes the captured result file (`$FAKE_SAMPLE.result.json` / `.result.jsonl`) only when given
the real client's flags, as the real client would:

* vLLM (`vllm bench serve`): the file only with `--save-result` (per-request arrays only with
  `--save-detailed`), at `--result-dir`/`--result-filename` (a name of its own when only the
  folder is given, the working directory when only the name is); E2EL rows only when
  `--percentile-metrics` names `e2el`.
* SGLang (`python -m sglang.bench_serving`): appended to `--output-file`, or, as the real client
  does without it, to a file of its own in the working directory; per-request arrays only with
  `--output-details`.

Knobs (environment): FAKE_EXIT=N exits N after the run; FAKE_WAIT=1 then says "fake client:
waiting" on stderr and sleeps until a SIGINT, which ends it with status 130 (as an interrupted
client); FAKE_IGNORE_SIGNALS=1 instead
ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT, says "fake client: waiting, deaf (pid N)" and sleeps
for ten minutes; FAKE_NO_FILE=1 makes the vLLM stand-in write no result file; FAKE_TAMPER=1 writes a result file whose mean TTFT is not the printed one.
"""
import json
import os
import sys
import time

DETAILS = {"input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "queue_times",
           "generated_texts", "errors"}


def flag(args, name):
    """The value of --name (or --name=value), True for a bare switch, None when absent."""
    for i, a in enumerate(args):
        key = a.split("=", 1)[0].replace("_", "-")
        if key == name:
            if "=" in a:
                return a.split("=", 1)[1]
            if i + 1 < len(args) and not args[i + 1].startswith("--"):
                return args[i + 1]
            return True
    return None


def show_output(sample, keep_line):
    # Warnings and progress go to stderr, the rest to stdout, as the real clients do.
    with open(sample + ".stdout.txt", encoding="utf-8", errors="replace", newline="") as f:
        for line in f:
            if not keep_line(line):
                continue
            out = sys.stderr if line.startswith(("W1", "WARNING", "  0%")) else sys.stdout
            out.write(line)
            out.flush()


def result_docs(sample, ext, details):
    docs = []
    with open(sample + ext, encoding="utf-8") as f:
        text = f.read()
    lines = [l for l in text.splitlines() if l.strip()] if ext == ".result.jsonl" else [text]
    for line in lines:
        doc = json.loads(line)
        if not details:
            doc = {k: v for k, v in doc.items() if k not in DETAILS}
        if os.environ.get("FAKE_TAMPER"):
            for key in ("mean_ttft_ms",):
                if key in doc:
                    doc[key] = doc[key] + 5.0
        docs.append(doc)
    return docs


def finish():
    if os.environ.get("FAKE_IGNORE_SIGNALS"):
        # A client that cannot be stopped politely: only SIGKILL ends it.
        import signal
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_IGN)
        sys.stderr.write("fake client: waiting, deaf (pid %d)\n" % os.getpid())
        sys.stderr.flush()
        time.sleep(600)
    if os.environ.get("FAKE_WAIT"):
        try:
            sys.stderr.write("fake client: waiting\n")
            sys.stderr.flush()
            time.sleep(60)
        except KeyboardInterrupt:
            sys.stderr.write("fake client: interrupted\n")
            sys.exit(130)
    sys.exit(int(os.environ.get("FAKE_EXIT", "0")))


def vllm(args):
    sample = os.environ["FAKE_SAMPLE"]
    metrics = flag(args, "--percentile-metrics")
    metrics = metrics.split(",") if isinstance(metrics, str) else ["ttft", "tpot", "itl"]
    show_output(sample, lambda line: "E2EL" not in line or "e2el" in metrics)
    if flag(args, "--save-result") and not os.environ.get("FAKE_NO_FILE"):
        d, name = flag(args, "--result-dir"), flag(args, "--result-filename")
        name = name if isinstance(name, str) else "openai-infqps-concurrency4-fake.json"
        path = os.path.join(d, name) if isinstance(d, str) else name
        if isinstance(d, str):
            os.makedirs(d, exist_ok=True)
        doc = result_docs(sample, ".result.json", bool(flag(args, "--save-detailed")))[0]
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
    finish()


def sglang(args):
    sample = os.environ["FAKE_SAMPLE"]
    show_output(sample, lambda line: True)
    path = flag(args, "--output-file")
    path = path if isinstance(path, str) else "sglang-oai_fake_16_1024_512.jsonl"
    with open(path, "a", encoding="utf-8") as f:
        for doc in result_docs(sample, ".result.jsonl", bool(flag(args, "--output-details"))):
            f.write(json.dumps(doc) + "\n")
    finish()
