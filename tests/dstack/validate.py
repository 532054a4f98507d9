"""Validate every sample's `--format dstack` output against dstack's own pydantic models.

Run by tests/dstack/run.sh (which builds the venv with dstack installed, outside the repository):

    python tests/dstack/validate.py BENCH_NORMALIZE_EXECUTABLE SAMPLES_DIR

For every input under SAMPLES_DIR/*/ (truth files, manifests and READMEs aside), the executable is
run with `--format dstack`:

* exit 0 or 1: stdout must be one object per accepted run (a run rejected by a rule, exit 1, is
  not written; for several runs a list of entries `{input, block, first_line, load, benchmark |
  metrics}`, each naming its run, whose object is checked) that dstack's model accepts: `PresetBenchmark` when it
  is the whole `benchmark` object, else `PresetBenchmarkMetrics`. A metrics object is then put in
  a `PresetBenchmark` with the workload the run's own report states (num_requests, concurrency),
  so that dstack's cross-field rules (no failed request, successful == num_requests) are applied
  as well, and its `per_user_tok_per_s` must be `output_tok_per_s / workload.concurrency`.
* exit 5: stdout must be empty of any object dstack would reject, and stderr must name a missing
  or unacceptable figure and say how to get it (a client flag, or `bench-normalize run`).
* exit 3: no run in the input (not a result, or nothing usable): nothing on stdout.

Every object written (exit 0) is then given to `bench-normalize check`, which must accept it (exit
0) with its `dstack-model` rule passing: `check`'s verdict on dstack's shape is dstack's own.

Then dstack's own documents (tests/dstack/documents: a `trial.json` and a `final_report.json`):
dstack's model accepts their `benchmark` (the final report as a whole: `PresetAgentSuccess`),
`check` accepts them, and for each mutation below `check` refuses the document (a shape error,
exit 3, or its `dstack-model` rule) exactly when dstack's model refuses the mutated `benchmark`.
The same mutations are applied to the bare `benchmark` object (`PresetBenchmark`) and, those
below `metrics`, to the bare `metrics` object (`PresetBenchmarkMetrics`, what `--format dstack`
writes for a log): `check` and dstack's model agree on every one.

Prints a summary line per outcome and exits 1 if anything failed (all failures listed).
"""

import copy
import json
import os
import subprocess
import sys
import tempfile

from pydantic import ValidationError

from dstack._internal.cli.models.preset_agent import PresetAgentSuccess
from dstack._internal.core.models.presets import PresetBenchmark, PresetBenchmarkMetrics

# tests/samples.py: the sample inputs, listed as every validator lists them.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from samples import samples  # noqa: E402

# An entry of the list written for several runs, besides its object (crates/core/src/dstack_model.rs).
ENTRY_KEYS = ("input", "block", "first_line", "load")

HOW = ("--percentile-metrics", "--output-details", "--max-concurrency", "bench-normalize run", "run the client",
       "result file", "run it again")


def report_runs(exe, path):
    """The run's canonical report (its workload), to put a metrics object in a benchmark."""
    p = subprocess.run([exe, "--format", "json", path], capture_output=True, text=True)
    try:
        return json.loads(p.stdout)["runs"]
    except (ValueError, KeyError):
        return []


def check_one(exe, path):
    p = subprocess.run([exe, "--format", "dstack", "--error-format", "json", path], capture_output=True, text=True)
    code = p.returncode
    if code == 5:
        errors = [json.loads(line) for line in p.stderr.splitlines() if line.startswith("{")]
        unwritable = [e for e in errors if e.get("code") == "unwritable"]
        if not unwritable:
            return "fail", f"exit 5 without an 'unwritable' diagnostic: {p.stderr[:300]}"
        for e in unwritable:
            if e.get("exit_code") != 5 or not any(h in e["message"] for h in HOW):
                return "fail", f"exit 5 message does not say how to get the figure: {e}"
        # Runs that could be written still are, and must validate.
        if not p.stdout.strip():
            return "unwritable", unwritable[0]["message"]
    elif code == 3 and not p.stdout.strip():
        return "nothing", p.stderr.strip()[:200]
    elif code == 3 and "unusable" not in p.stderr:
        return "fail", "exit 3 with output"
    # exit 3 with output: a run had nothing usable (not written, said on stderr), others were.
    elif code not in (0, 1, 3):
        return "fail", f"exit {code}: {p.stderr[:300]}"
    elif code == 1 and not p.stdout.strip():
        if "rejected" not in p.stderr:
            return "fail", f"exit 1 without a rejection on stderr: {p.stderr[:300]}"
        return "rejected", p.stderr.strip()[:200]
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        return "fail", f"stdout is not JSON ({e}): {p.stdout[:200]}"
    # Several runs: entries, each naming its run; one run: its object alone.
    entries = doc if isinstance(doc, list) else [None]
    objs = []
    for i, e in enumerate(entries):
        if e is None:
            objs.append(doc)
            continue
        inner = [k for k in ("benchmark", "metrics") if k in e]
        if set(e) != set(ENTRY_KEYS) | set(inner) or len(inner) != 1:
            return "fail", f"entry {i}: not {{{', '.join(ENTRY_KEYS)}, benchmark | metrics}}: {sorted(e)}"
        if e["input"] != path or not isinstance(e["block"], int):
            return "fail", f"entry {i}: names input {e['input']!r}, block {e['block']!r}"
        objs.append(e[inner[0]])
    runs = None
    for i, obj in enumerate(objs):
        try:
            if "metrics" in obj:
                PresetBenchmark.model_validate(obj)
                continue
            m = PresetBenchmarkMetrics.model_validate(obj)
        except ValidationError as e:
            return "fail", f"object {i}: dstack rejects it: {e}"
        # dstack's definitions.
        if abs(obj["output_tok_per_s"] - obj["total_output_tokens"] / obj["duration_seconds"]) > 1e-4 * obj["output_tok_per_s"]:
            return "fail", f"object {i}: output_tok_per_s is not total_output_tokens / duration_seconds"
        if runs is None:
            runs = report_runs(exe, path)
        # The run this object came from: the block its entry names; one run alone is the first.
        if entries[i] is not None:
            match = [r for r in runs if r.get("source", {}).get("block") == entries[i]["block"]]
            if match and (match[0]["workload"].get("max_concurrency") != entries[i]["load"]["max_concurrency"]):
                return "fail", f"entry {i}: its load is not its run's: {entries[i]['load']}"
        elif len(runs) == len(objs):
            match = [runs[i]]
        else:
            match = [r for r in runs if r.get("totals", {}).get("output_tokens") == obj["total_output_tokens"]
                     and r.get("totals", {}).get("duration_s") == obj["duration_seconds"]]
        if not match:
            return "fail", f"object {i}: no run of the report has its totals"
        if match[0].get("verdict") != "accepted":
            return "fail", f"object {i}: written for a rejected run"
        w = match[0].get("workload", {})
        conc = w.get("max_concurrency")
        if not conc or abs(obj["per_user_tok_per_s"] - obj["output_tok_per_s"] / conc) > 1e-4 * obj["per_user_tok_per_s"]:
            return "fail", f"object {i}: per_user_tok_per_s is not output_tok_per_s / concurrency {conc}"
        n = w.get("num_prompts")
        if n is not None:
            bench = {
                "tool": "test", "tool_version": "test", "command": "test",
                "workload": {"api": "completions", "num_requests": n, "input_tokens": 1, "output_tokens": 2,
                             "concurrency": conc},
                "metrics": obj,
            }
            try:
                PresetBenchmark.model_validate(bench)
            except ValidationError as e:
                return "fail", f"object {i}: with the run's workload, dstack rejects it: {e}"
    if code == 0:
        back = subprocess.run([exe, "check", "-", "--format", "json"], input=p.stdout, capture_output=True, text=True)
        if back.returncode != 0:
            return "fail", f"`check` refuses the output (exit {back.returncode}): {back.stderr[:300]}"
        for i, run in enumerate(json.loads(back.stdout)["runs"]):
            rule = [c for c in run["checks"] if c["id"] == "dstack-model"]
            if not rule or rule[0]["status"] != "pass":
                return "fail", f"object {i}: dstack accepts it, `check`'s dstack-model says {rule}"
    return "valid", f"{len(objs)} object(s)"


def _set(doc, path, value):
    *head, last = path.split(".")
    for k in head:
        doc = doc[k]
    if value is _DELETE:
        doc.pop(last, None)
    else:
        doc[last] = value


_DELETE = object()

# Mutations of a benchmark object: (name, path, value). Some dstack accepts, most it refuses.
MUTATIONS = [
    ("as written", None, None),
    ("unknown metrics key", "metrics.e2e_ms", {"mean": 6682.0, "p50": 6682.0, "p99": 6690.0}),
    ("unknown workload key", "workload.max_concurrency", 4),
    ("unknown top key", "notes", "x"),
    ("extra latency statistic", "metrics.ttft_ms.p90", 141.0),
    ("tpot p50 null", "metrics.tpot_ms.p50", None),
    ("tpot null", "metrics.tpot_ms", None),
    ("failed request", "metrics.failed_requests", 1),
    ("fewer successes", "metrics.successful_requests", 15),
    ("api generate", "workload.api", "generate"),
    ("api chat", "workload.api", "chat_completions"),
    ("one output token", "workload.output_tokens", 1),
    ("zero duration", "metrics.duration_seconds", 0),
    ("negative ttft", "metrics.ttft_ms.p99", -1.0),
    ("zero per-user rate", "metrics.per_user_tok_per_s", 0),
    ("no dataset", "workload.dataset", _DELETE),
    ("a dataset", "workload.dataset", "sharegpt"),
    ("dataset null", "workload.dataset", None),
    ("no shared prefix", "workload.shared_prefix_tokens", _DELETE),
    ("empty version", "tool_version", ""),
    ("bearer token", "command", "vllm bench serve --header 'Authorization: Bearer sk0123456789abcdefgh'"),
    ("zero concurrency", "workload.concurrency", 0),
    ("no api", "workload.api", _DELETE),
    ("no input tokens", "workload.input_tokens", _DELETE),
    ("no output tokens", "workload.output_tokens", _DELETE),
]


def dstack_accepts(bench):
    try:
        PresetBenchmark.model_validate(bench)
        return True
    except ValidationError:
        return False


def metrics_accepts(metrics):
    try:
        PresetBenchmarkMetrics.model_validate(metrics)
        return True
    except ValidationError:
        return False


def check_verdict(exe, doc):
    """`check`: True accepted by dstack's model rule (and its shape), False refused, with why."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
    try:
        p = subprocess.run([exe, "check", f.name, "--format", "json"], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if p.returncode == 3:
        return False, p.stderr.strip()[:200]
    try:
        run = json.loads(p.stdout)["runs"][0]
    except (ValueError, KeyError, IndexError):
        return None, f"exit {p.returncode}: {p.stderr[:200]}"
    rule = [c for c in run["checks"] if c["id"] == "dstack-model"][0]
    return rule["status"] == "pass", rule["message"][:200]


def check_documents(exe, docs_dir):
    failures = []
    for name in ("trial.json", "final_report.json"):
        doc = json.load(open(os.path.join(docs_dir, name)))
        if name == "final_report.json":
            try:
                PresetAgentSuccess.model_validate(doc)
            except ValidationError as e:
                failures.append(f"{name}: dstack refuses the fixture itself: {e}")
        # Read back with `--format dstack`: the whole benchmark object (the document states the
        # client's version and command), which dstack accepts and which is the document's own.
        p = subprocess.run([exe, "--format", "dstack", os.path.join(docs_dir, name)], capture_output=True, text=True)
        try:
            back = json.loads(p.stdout)
            PresetBenchmark.model_validate(back)
            if back != doc["benchmark"]:
                failures.append(f"{name}: --format dstack does not give the document's benchmark back: {back}")
        except (ValueError, ValidationError) as e:
            failures.append(f"{name}: --format dstack (exit {p.returncode}) is not a benchmark dstack accepts: {e}")
        for label, path, value in MUTATIONS:
            mutated = copy.deepcopy(doc)
            if path is not None:
                _set(mutated["benchmark"], path, value)
            want = dstack_accepts(mutated["benchmark"])
            got, why = check_verdict(exe, mutated)
            if label == "as written" and not want:
                failures.append(f"{name}: dstack refuses the fixture's benchmark")
            if got != want:
                failures.append(f"{name} / {label}: dstack {'accepts' if want else 'refuses'}, check says {got}: {why}")
            elif os.environ.get("VERBOSE"):
                print(f"agree      {name} / {label}: dstack {'accepts' if want else 'refuses'}; {why}")
    # The bare benchmark object, and the bare metrics object, under the same mutations.
    doc = json.load(open(os.path.join(docs_dir, "trial.json")))
    compared = 2 * len(MUTATIONS)
    for shape in ("benchmark", "metrics"):
        for label, path, value in MUTATIONS + [("unknown metrics-object key", "metrics.notes", "x")]:
            bench = copy.deepcopy(doc["benchmark"])
            if path is not None:
                _set(bench, path, value)
            if shape == "benchmark":
                mutated, want = bench, dstack_accepts(bench)
            elif path is None or path.startswith("metrics."):
                mutated, want = bench["metrics"], metrics_accepts(bench["metrics"])
            else:
                continue
            got, why = check_verdict(exe, mutated)
            compared += 1
            if got != want:
                failures.append(f"bare {shape} / {label}: dstack {'accepts' if want else 'refuses'}, check says {got}: {why}")
            elif os.environ.get("VERBOSE"):
                print(f"agree      bare {shape} / {label}: dstack {'accepts' if want else 'refuses'}; {why}")
    print(f"documents: {compared} checked, {len(failures)} disagreements")
    return failures


# `run` mode against the stand-in client (tests/fake-client): the whole `benchmark` object, as a
# dstack agent stores it, for each client the stand-in plays, with the sample it prints.
RUN_CASES = [
    ("captured/vllm-s2", ["vllm", "bench", "serve", "--model", "m", "--dataset-name", "random",
                          "--random-input-len", "1024", "--random-output-len", "512",
                          "--num-prompts", "16", "--max-concurrency", "4"]),
    ("captured/sglang-oai-s2", ["python3", "-m", "sglang.bench_serving", "--backend", "sglang-oai",
                            "--dataset-name", "random", "--random-input-len", "1024",
                            "--random-output-len", "512", "--num-prompts", "16",
                            "--max-concurrency", "4"]),
]


def check_run_mode(exe, root):
    import tempfile
    fake = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fake-client"))
    failures = []
    for sample, command in RUN_CASES:
        env = dict(os.environ, PATH=os.path.join(fake, "bin") + os.pathsep + os.environ["PATH"],
                   PYTHONPATH=fake, FAKE_SAMPLE=os.path.abspath(os.path.join(root, sample)))
        with tempfile.TemporaryDirectory() as cwd:
            p = subprocess.run([os.path.abspath(exe), "run", "--format", "dstack", "--", *command],
                               capture_output=True, text=True, env=env, cwd=cwd)
            left = os.listdir(cwd)
        if p.returncode != 0:
            failures.append(f"run {sample}: exit {p.returncode}: {p.stderr[-400:]}")
            continue
        if left:
            failures.append(f"run {sample}: left {left} in the working directory")
        bench = json.loads(p.stdout)
        try:
            PresetBenchmark.model_validate(bench)
        except ValidationError as e:
            failures.append(f"run {sample}: dstack rejects the benchmark object: {e}")
            continue
        print(f"run mode   {sample}: PresetBenchmark accepts tool {bench['tool']!r} {bench['tool_version']}")
    return failures


def main():
    exe, root = sys.argv[1], sys.argv[2]
    outcomes = {}
    failures = []
    for path in samples(root):
        kind, detail = check_one(exe, path)
        outcomes.setdefault(kind, []).append(path)
        if kind == "fail":
            failures.append(f"{os.path.relpath(path, root)}: {detail}")
        if os.environ.get("VERBOSE"):
            print(f"{kind:10} {os.path.relpath(path, root)}: {detail}")
    for kind in sorted(outcomes):
        print(f"{kind}: {len(outcomes[kind])}")
    failures += check_documents(exe, os.path.join(os.path.dirname(os.path.abspath(__file__)), "documents"))
    failures += check_run_mode(exe, root)
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    if not outcomes.get("valid"):
        print("no sample gave an object dstack accepts")
        sys.exit(1)


if __name__ == "__main__":
    main()
