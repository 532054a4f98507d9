#!/usr/bin/env python3
"""Builds the samples in samples/noisy/ from real captured output (samples/captured, samples/versions),
the way people and agents actually capture and paste it. Every file is constructed, not captured:
the result blocks inside are real, the noise around them follows what docs/formats.md ("What surrounds a
block") says the tools and their neighbours print. Run from anywhere: python3 samples/noisy/make.py"""
import json, os, random

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.dirname(HERE)
rnd = random.Random(7)


def read(rel):
    with open(os.path.join(SAMPLES, rel), encoding="utf-8") as f:
        return f.read()


def block(text, sglang=False):
    """The result block (banner to closing line) of a capture, as printed."""
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines) if "Serving Benchmark Result" in l)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() and set(lines[i].strip()) == {"="})
    return lines[start : end + 1]


def write(name, text, newline="\n"):
    with open(os.path.join(HERE, name), "w", encoding="utf-8", newline="") as f:
        f.write(text.replace("\n", newline))


SERVER = "INFO 08-28 22:41:{:02d} [metrics.py:351] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: {:.1f} tokens/s, Running: 4 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 2.1%, CPU KV cache usage: 0.0%."
GREEN, GREY, RESET, CYAN = "\x1b[32m", "\x1b[90m", "\x1b[0m", "\x1b[0;36m"

# 1. vLLM, both streams merged: server log lines of a co-located server interleaved inside and
#    after the block (complete lines, as another process writes them), colour codes on log lines,
#    CRLF endings (a Windows terminal capture).
vllm = read("captured/vllm-s2.stdout.txt").split("\n")
b = block("\n".join(vllm))
start = vllm.index(b[0])
out = vllm[:start]
for i, l in enumerate(b):
    out.append(l)
    if i in (5, 14, 22):
        out.append(f"{GREEN}INFO{RESET} {GREY}08-28 22:41:{i:02d}{RESET} [metrics.py:351] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 306.{i} tokens/s")
out += [SERVER.format(s, 306.3) for s in range(3)] + vllm[start + len(b) :]
write("vllm-server-interleaved-crlf.txt", "\n".join(out), newline="\r\n")

# 2. SGLang with colour codes on every line, tabs between label and value, no trailing spaces,
#    its dataset summary `Total input tokens:` before the block (a label that must not leak in).
sg = read("captured/sglang-oai-s2.stdout.txt")
pre = "#Input tokens: 16384\n#Output tokens: 8192\nTotal input tokens: 99999\nTotal output tokens: 77777\n"
lines = []
for l in block(sg):
    if ":" in l and "Serving" not in l:
        label, value = l.split(":", 1)
        l = f"{label}:\t{value.strip()}"
    lines.append(f"{CYAN}{l.rstrip()}{RESET}")
write("sglang-colour-tabs.txt", pre + "Starting warmup with 1 sequences...\n\n" + "\n".join(lines) + "\n")

# 3. A Markdown report with the block in a code fence, a second one quoted with `> `, and prose
#    around both (a GitHub comment).
v = "\n".join(block(read("captured/vllm-s1.stdout.txt")))
s = "\n".join("> " + l.rstrip() for l in block(read("captured/sglang-s1.stdout.txt")))
write(
    "markdown-fenced-and-quoted.md",
    "## Results\n\nvLLM, concurrency 4:\n\n```text\n" + v + "\n```\n\nSGLang for comparison (quoted from the issue):\n\n> ```\n" + s + "\n> ```\n\nBoth look fine.\n",
)

# 4. Inside YAML: a block scalar (indented by 4) and a list item (indented by 6), as a CI config
#    or a recipe file carries them.
y1 = "\n".join("    " + l.rstrip() for l in block(read("captured/sglang-oai-s3.stdout.txt")))
y2 = "\n".join("      " + l.rstrip() for l in block(read("captured/vllm-s3.stdout.txt")))
write("yaml-embedded.yaml", "benchmark:\n  name: s3\n  sglang_output: |\n" + y1 + "\n  runs:\n    - client: vllm\n      output: |\n" + y2 + "\n")

# 5. A block pasted on one line: every newline became a space (a chat message, a spreadsheet cell).
write("one-line.txt", "result: " + " ".join(l.strip() for l in block(read("captured/sglang-oai-s6.stdout.txt"))) + " (pasted from slack)\n")

# 6. A JSON structured log whose message holds the block, newlines escaped.
msg = "\n".join(block(read("captured/vllm-s6.stdout.txt")))
logs = [{"ts": "2026-11-29T19:00:0%dZ" % i, "level": "info", "msg": m} for i, m in enumerate(["benchmark starting", msg, "benchmark done"])]
write("escaped-json-log.jsonl", "\n".join(json.dumps(x) for x in logs) + "\n")

# 7. Values with stray characters and annotations, and one value that cannot be read for sure.
lines = block(read("captured/vllm-s3.stdout.txt"))
ann = []
for l in lines:
    if l.startswith("Mean TTFT"):
        l = l.rstrip() + "  ·"
    elif l.startswith("Mean ITL"):
        l = l.rstrip() + "   <===== per chunk!"
    elif l.startswith("Mean TPOT"):
        l = l.rstrip() + "  (*)"
    elif l.startswith("P99 ITL"):
        l = l.rstrip() + " 61.02"
    ann.append(l)
write("annotated-values.txt", "\n".join(ann) + "\n")

# 8. A Markdown table of the rows (no banner, no closing line).
rows = []
for l in block(read("captured/sglang-oai-s2.stdout.txt")):
    if ":" in l and not l.startswith("="):
        label, value = l.split(":", 1)
        rows.append(f"| {label.strip()} | {value.strip()} |")
write("markdown-table.md", "Our run (sglang-oai, k=10):\n\n| Metric | Value |\n|---|---|\n" + "\n".join(rows) + "\n\nNotes follow.\n")

# 9. A run cut off mid-block by a crash, then the next run of a shell loop, complete.
cut = block(read("captured/vllm-s5.stdout.txt"))[:14]
tb = ["Traceback (most recent call last):", '  File "/opt/venv/bin/vllm", line 8, in <module>', "KeyboardInterrupt"]
whole = read("captured/vllm-s1.stdout.txt")
write("cut-off-then-next-run.txt", "\n".join(cut + tb) + "\n" + whole)

# 10. Two tools in one stream, tqdm bars with `\r`, warnings, the vLLM preamble lines that
#     collide with block labels (`Maximum request concurrency: None`), a Rust client's
#     steady-state block after its result.
v = read("versions/vllm0.13.0-s1.stdout.txt")
g = read("versions/sglang0.5.5.post1-oai-s2.stdout.txt")
r = read("versions/vllmrs0.33.0-s2.stdout.txt")
bar = "\r" + "\r".join(f" {p:3d}%|{'█' * (p // 10):<10}| {p * 16 // 100}/16 [00:{p // 4:02d}<00:10,  1.50it/s]" for p in range(0, 101, 20)) + "\n"
write("mixed-tools-one-stream.txt", "Maximum request concurrency: None\nTraffic request rate: inf\n" + v + bar + "/opt/x.py:1: UserWarning: something\n  warnings.warn(...)\n" + g + r)
# A CI log that ran every peer in turn: their console tables between vLLM blocks and a vllm-rs sweep.
write("peers-one-stream.txt", read("captured/vllm-s2.stdout.txt") + read("peers/aiperf-s2.stdout.txt") + read("peers/guidellm-s2.stdout.txt") + read("versions/vllmrs0.33.0-sweep.stdout.txt") + read("peers/genaiperf-s2.stdout.txt"))
# 11. The dstack preset-report mistake, in a log: the TPOT rows overwritten with the ITL rows'
#     values (an agent "fixing" a block by hand). ITL is per chunk here (~10 tokens a chunk), so
#     the block now claims a decode ~10x slower than its own E2E latency and token counts allow:
#     a run that contradicts itself, for the tests that need a rejected run.
sg = read("captured/sglang-oai-s2.stdout.txt").split("\n")
itl = {l.split(" ITL")[0]: l.split(":", 1)[1] for l in sg if " ITL (ms):" in l}
out = []
for l in sg:
    if " TPOT (ms):" in l and l.split(" TPOT")[0] in itl:
        l = l.split(":", 1)[0] + ":" + itl[l.split(" TPOT")[0]]
    out.append(l)
write("tpot-overwritten-with-itl.txt", "\n".join(out))
# 12. A figure retyped with its decimal point moved (26.74 s typed as 2.674 s): the block's own
#     totals no longer add up (16 requests of 6.68 s on 4 slots cannot fit in 2.674 s), which the
#     tests need as a run rejected by its rules.
sg = read("captured/sglang-oai-s2.stdout.txt")
assert "Benchmark duration (s):                  26.74" in sg
write("duration-mistyped.txt", sg.replace("Benchmark duration (s):                  26.74", "Benchmark duration (s):                  2.674"))
# 13. A vllm-rs sweep pasted from its summary on (the steps' blocks scrolled away): the summary
#     lines are then the only record of the steps, each read as a run (tests/summary_fold.rs).
sw = read("versions/vllmrs0.33.0-sweep.stdout.txt")
write("vllm-rs-sweep-summary-alone.txt", sw[sw[: sw.index(" Sweep Summary ")].rindex("\n") + 1 :])
print("wrote", sorted(f for f in os.listdir(HERE) if not f.endswith((".py", ".md")) or f.endswith("table.md") or f.startswith("markdown")))
