"""Validate every sample's `--format llmd-br` output with llm-d's own Benchmark Report package.

Run by tests/llmd/run.sh (which builds the venv with `llmd-benchmark-report` installed, outside
the repository):

    python tests/llmd/validate.py BENCH_NORMALIZE_EXECUTABLE SAMPLES_DIR

For every input under SAMPLES_DIR/*/ (truth files, manifests and READMEs aside), the executable is
run with `--format llmd-br` and with `--format json` (the canonical report, to compare meanings):

* exit 0 or 1: stdout is one JSON document per accepted run, a line each (a run rejected by a
  rule, exit 1, is not written, and stderr says so). Each line must load with
  `load_benchmark_report` (the package's loader: `BenchmarkReportV02`, extra keys forbidden,
  units checked) and keep the version `0.2`; a single run's whole output must load with
  `import_benchmark_report` as a file too. Then the meanings:
  - `time_per_output_token.mean` is the canonical report's `derived.tpot_ms.mean`, or absent
    when that is null;
  - `inter_token_latency` is present only when the run's `source.semantics.itl` is `token`, and a
    per-chunk ITL is named as left out in the description;
  - `normalized_time_per_output_token` is the canonical `reported.latency_per_output_token_ms`;
  - `output_token_rate` / `request_rate` are `derived.output_tok_per_s` / `request_per_s`;
  - `requests.failures`, when written, is `totals.failed_requests` when the run printed it.
* exit 3: no run in the input: nothing on stdout; or a run with nothing usable (verdict
  `unusable`, not written, said on stderr) beside runs that are written.
* exit 5: a run gives no figure a Benchmark Report holds (not written, stderr says it `cannot be
  written as an llm-d Benchmark Report`), beside runs that are written.
* Every document written is accepted by `bench-normalize check` (exit 0).

Prints a summary and exits 1 when any input fails (all listed).
"""

import json
import os
import re
import subprocess
import sys
import tempfile

from llmd_benchmark_report import import_benchmark_report, load_benchmark_report

# tests/samples.py: the sample inputs, listed as every validator lists them.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from samples import samples  # noqa: E402

REL = 1e-9


def close(a, b):
    return a is not None and b is not None and abs(a - b) <= REL * max(1.0, abs(a), abs(b))


def dig(d, *path):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def description(doc):
    return dig(doc, "scenario", "load", "metadata", "description") or dig(doc, "run", "description") or ""


def meanings(doc, run):
    """What differs between the Benchmark Report and the canonical run it came from."""
    errs = []
    lat = dig(doc, "results", "request_performance", "aggregate", "latency") or {}
    thr = dig(doc, "results", "request_performance", "aggregate", "throughput") or {}
    req = dig(doc, "results", "request_performance", "aggregate", "requests")
    tpot = run["derived"]["tpot_ms"].get("mean")
    got = dig(lat, "time_per_output_token", "mean")
    if tpot is None and got is not None:
        errs.append(f"time_per_output_token {got} written where the derived TPOT is null")
    if tpot is not None and not close(got, tpot):
        errs.append(f"time_per_output_token.mean {got} != derived.tpot_ms.mean {tpot}")
    itl_per = run["source"].get("semantics", {}).get("itl")
    if "inter_token_latency" in lat and itl_per != "token":
        errs.append(f"inter_token_latency written for an ITL timed per {itl_per}")
    if "itl_ms" in run["reported"] and itl_per == "chunk" and "inter_token_latency left out" not in description(doc):
        errs.append("a per-chunk ITL left out without saying so in the description")
    ntpot = dig(run, "reported", "latency_per_output_token_ms", "mean")
    if ntpot is not None and not close(dig(lat, "normalized_time_per_output_token", "mean"), ntpot):
        errs.append("normalized_time_per_output_token is not reported.latency_per_output_token_ms")
    for name, key in (("output_token_rate", "output_tok_per_s"), ("request_rate", "request_per_s")):
        want = run["derived"].get(key)
        have = dig(thr, name, "mean")
        if (want is None) != (have is None) or (want is not None and not close(want, have)):
            errs.append(f"throughput.{name} {have} != derived.{key} {want}")
    failed = run["totals"].get("failed_requests")
    if failed is not None and req is not None and req.get("failures") != failed:
        errs.append(f"requests.failures {req.get('failures')} != totals.failed_requests {failed}")
    return errs


def check_one(exe, path):
    p = subprocess.run([exe, "--format", "llmd-br", path], capture_output=True, text=True)
    code = p.returncode
    if code == 3 and "unusable" not in p.stderr:
        return ("fail", "exit 3 with output") if p.stdout.strip() else ("nothing", p.stderr.strip()[:200])
    if code == 3 and not p.stdout.strip():
        return "nothing", p.stderr.strip()[:200]
    # exit 3 with output: a run had nothing usable (not written, said on stderr), others were.
    if code not in (0, 1, 3, 5):
        return "fail", f"exit {code}: {p.stderr[:300]}"
    canon = subprocess.run([exe, "--format", "json", path], capture_output=True, text=True)
    runs = [r for r in json.loads(canon.stdout)["runs"] if r["verdict"] == "accepted"]
    lines = p.stdout.splitlines()
    unwritable = {int(m) for m in re.findall(r"run (\d+): cannot be written as an llm-d Benchmark Report", p.stderr)}
    if code == 5 and not unwritable:
        return "fail", f"exit 5 without naming the run not written: {p.stderr[:300]}"
    runs = [r for r in runs if r["source"]["block"] not in unwritable]
    if not lines and code == 5:
        return "unwritable", p.stderr.strip()[:200]
    if len(lines) != len(runs):
        return "fail", f"{len(lines)} documents for {len(runs)} accepted runs"
    if code in (1, 3) and "llmd-br: not written" not in p.stderr:
        return "fail", "exit 1 without saying the rejected run was not written"
    for i, (line, run) in enumerate(zip(lines, runs), 1):
        try:
            doc = json.loads(line)
            br = load_benchmark_report(doc)
        except Exception as e:  # pydantic's ValidationError, or JSON
            return "fail", f"document {i}: {str(e)[:600]}"
        if br.version != "0.2":
            return "fail", f"document {i}: version {br.version}"
        errs = meanings(doc, run)
        if errs:
            return "fail", f"document {i}: " + "; ".join(errs)
        back = subprocess.run([exe, "check", "-"], input=line, capture_output=True, text=True)
        if back.returncode != 0:
            return "fail", f"document {i}: `check` refuses it (exit {back.returncode}): {back.stderr[:300]}"
    if code == 5:
        return "valid-some-unwritable", f"{len(lines)} report(s)"
    if len(lines) == 1:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(p.stdout)
        try:
            import_benchmark_report(f.name)
        except Exception as e:
            return "fail", f"the output as a file: {str(e)[:600]}"
        finally:
            os.unlink(f.name)
    return ("valid" if code == 0 else "valid-some-rejected"), f"{len(lines)} report(s)"


def main():
    exe, root = sys.argv[1], sys.argv[2]
    counts, failures = {}, []
    for path in samples(root):
        outcome, detail = check_one(exe, path)
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome == "fail":
            failures.append(f"{path}: {detail}")
    for f in failures:
        print(f"FAIL {f}")
    print("llmd-br: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
