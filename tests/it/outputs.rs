//! Output formats and integration: JSON Schema, table, CSV, dstack, --explain, parsers,
//! completions, man.

use crate::common;

use std::process::{Command, Output};

use bench_normalize::emit::{Emitter, Notice, OutputFormat};
use serde_json::{Value, json};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bench-normalize"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).env("NO_COLOR", "1").output().unwrap()
}

fn sample(name: &str) -> String {
    common::samples_dir().join(name).display().to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn every_snapshot_validates_against_the_schema() {
    let schema: Value = serde_json::from_slice(&run(&["schema"]).stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let mut checked = 0;
    for entry in std::fs::read_dir(common::samples_dir().parent().unwrap().join("snapshots")).unwrap() {
        let path = entry.unwrap().path();
        // Reports only: the samples' (`sample@...`) and the reports judged on objectives
        // (`objectives@...`); other commands' outputs (sweep, compare) are no report.
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !(name.starts_with("sample@") || name.starts_with("objectives@")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // insta: a header between `---` lines, then the snapshot.
        let body = text.splitn(3, "---\n").nth(2).unwrap();
        let report: Value = serde_json::from_str(body).unwrap();
        if report.get("error").is_some() {
            continue;
        }
        let errors: Vec<String> =
            validator.iter_errors(&report).map(|e| format!("{} at {}", e, e.instance_path())).take(3).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        checked += 1;
    }
    assert!(checked > 100, "{checked}");
    // The schema says what a figure is.
    let ttft = &schema["$defs"]["Run"]["properties"]["reported"]["properties"]["ttft_ms"];
    assert_eq!(ttft["type"], "object");
    assert!(ttft["description"].as_str().unwrap().contains("time to first token"));
    let bad = json!({ "schema_version": 1, "runs": [ { "totals": { "output_tokens": "many" } } ] });
    assert!(!validator.is_valid(&bad));
}

#[test]
fn table_puts_runs_side_by_side_with_derived_tpot_first() {
    let o = run(&["-f", "table", &sample("captured/sglang-oai-s2.stdout.txt"), &sample("public/078-vllm.txt")]);
    assert_eq!(o.status.code(), Some(0), "078 is a cut-off block with every key figure: a warning");
    let t = stdout(&o);
    assert!(!t.contains('\u{1b}'), "no colour with NO_COLOR");
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[1].contains("sglang-oai-s2.stdout.txt #1") && lines[1].contains("078-vllm.txt #1"), "{}", lines[1]);
    assert!(lines[3].starts_with("│ TPOT, derived (ms)") && lines[3].contains("12.8"), "{}", lines[3]);
    assert!(lines[5].starts_with("│ Per-user decode rate (tok/s)") && lines[5].contains("78.11"), "{}", lines[5]);
    assert!(t.contains("125.81 per chunk"));
    assert!(t.contains("accepted (warn: complete-block"), "{t}");
}

#[test]
fn csv_has_one_header_and_one_row_per_run() {
    let o = run(&["-f", "csv", &sample("captured/vllm-s4.stdout.txt"), &sample("captured/sglang-s1.stdout.txt")]);
    assert_eq!(o.status.code(), Some(0));
    let mut r = csv::Reader::from_reader(o.stdout.as_slice());
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(header, bench_normalize::emit::CSV_COLUMNS);
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 5);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let concurrency: Vec<&str> = rows.iter().map(|row| &row[col("max_concurrency")]).collect();
    assert_eq!(concurrency, ["1", "2", "4", "8", "4"]);
    assert_eq!(&rows[4][col("tpot_method")], "e2e-ttft-tokens");
    let tpot: f64 = rows[4][col("tpot_ms")].parse().unwrap();
    assert!((tpot - 20.0).abs() < 0.05);
}

/// The keys of dstack 0.22.5's `PresetBenchmarkMetrics`, in its order (unknown keys are forbidden).
const DSTACK_METRICS: [&str; 9] = [
    "successful_requests",
    "failed_requests",
    "duration_seconds",
    "total_input_tokens",
    "total_output_tokens",
    "output_tok_per_s",
    "per_user_tok_per_s",
    "ttft_ms",
    "tpot_ms",
];

fn truth(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(sample(name)).unwrap()).unwrap()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

#[test]
fn dstack_writes_exactly_dstacks_metrics_with_dstacks_definitions() {
    // vLLM 0.33 with e2el: TPOT derived from E2E, its percentiles from the tool's TPOT rows (their
    // mean agrees); the argument dump gives num_prompts, the block the concurrency.
    let o = run(&["-f", "dstack", &sample("captured/vllm-s2.stdout.txt")]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    let m: Value = serde_json::from_slice(&o.stdout).unwrap();
    let keys: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, DSTACK_METRICS);
    let t = truth("captured/vllm-s2.truth.json");
    assert_eq!(m["successful_requests"], t["num_prompts"]);
    assert_eq!(m["failed_requests"], 0);
    for k in ["mean", "p50", "p99"] {
        assert!(m["tpot_ms"][k].is_f64() && m["ttft_ms"][k].is_f64(), "{k}: {m}");
    }
    let tpot = m["tpot_ms"]["mean"].as_f64().unwrap();
    assert!(close(tpot, t["true_tpot_ms"].as_f64().unwrap(), 0.01), "{tpot}");
    // dstack's definitions: output rate over the duration, per-user rate over the concurrency.
    let (out, dur) = (m["total_output_tokens"].as_f64().unwrap(), m["duration_seconds"].as_f64().unwrap());
    assert!(close(m["output_tok_per_s"].as_f64().unwrap(), out / dur, 1e-5));
    let per_user = m["output_tok_per_s"].as_f64().unwrap() / t["concurrency"].as_f64().unwrap();
    assert!(close(m["per_user_tok_per_s"].as_f64().unwrap(), per_user, 1e-5), "{m}");
}

#[test]
fn dstack_takes_tpot_percentiles_from_the_per_request_arrays() {
    // SGLang 0.5.5.post1 prints no TPOT row; its --output-details file gives every figure.
    let o = run(&["-f", "dstack", &sample("versions/sglang0.5.5.post1-oai-s2.result.jsonl")]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let m: Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = truth("versions/sglang0.5.5.post1-oai-s2.truth.json");
    let tpot = &m["tpot_ms"];
    assert!(close(tpot["mean"].as_f64().unwrap(), t["true_tpot_ms"].as_f64().unwrap(), 0.01), "{tpot}: never the ITL");
    let (p50, p99) = (tpot["p50"].as_f64().unwrap(), tpot["p99"].as_f64().unwrap());
    assert!(p50 <= p99 && close(p50, tpot["mean"].as_f64().unwrap(), 0.01), "{tpot}");
    assert_eq!(m["failed_requests"], 0, "counted in the per-request errors");
}

#[test]
fn dstack_refuses_a_run_without_tpot_percentiles_and_says_how_to_get_them() {
    // The same run's stdout: TPOT 12.8 derived from E2E, and no TPOT row to take percentiles
    // from. Nothing is written (dstack requires numbers), exit 5, the message names the figures
    // and the flags.
    let o = run(&["-f", "dstack", &sample("versions/sglang0.5.5.post1-oai-s2.stdout.txt")]);
    assert_eq!(o.status.code(), Some(5));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("run 1: cannot be written as dstack's benchmark metrics"), "{err}");
    assert!(err.contains("tpot_ms.p50, tpot_ms.p99: TPOT 12.8 ms is derived from E2E latency as a mean only"), "{err}");
    assert!(err.contains("--output-file FILE --output-details") && err.contains("bench-normalize run --"), "{err}");
    // As JSON for an agent.
    let o = run(&["-f", "dstack", "--error-format", "json", &sample("versions/sglang0.5.5.post1-oai-s2.stdout.txt")]);
    let e: Value = serde_json::from_str(String::from_utf8(o.stderr).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!((e["code"].as_str(), e["exit_code"].as_i64()), (Some("unwritable"), Some(5)));
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("run 1: cannot be written as dstack's benchmark metrics: tpot_ms.p50")
    );
}

#[test]
fn dstack_never_puts_percentiles_of_another_source_beside_the_derived_mean() {
    // A published SGLang block: the tool's TPOT rows (request-weighted mean 34.38 ms, varying
    // output lengths) disagree with the E2E-derived 33.04 ms: their median and p99 are not
    // written beside it.
    let o = run(&["-f", "dstack", &sample("public/075-sglang.txt")]);
    assert_eq!(o.status.code(), Some(5));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("the tool's TPOT rows (mean 34.38 ms) disagree with the derived TPOT 33.04 ms"), "{err}");
    // The proposal format writes the derived mean and leaves the percentiles null.
    let o = run(&["-f", "dstack-e2e", &sample("public/075-sglang.txt")]);
    assert_eq!(o.status.code(), Some(0));
    let m: Value = serde_json::from_slice(&o.stdout).unwrap();
    // (E2E - TTFT) / (N / R - 1), from the block's rows.
    let derived = (17465.62 - 173.40) / (52444.0 / 100.0 - 1.0);
    assert!(close(m["tpot_ms"]["mean"].as_f64().unwrap(), derived, 1e-5), "{m}");
    assert_eq!((m["tpot_ms"]["p50"].clone(), m["tpot_ms"]["p99"].clone()), (Value::Null, Value::Null));
    assert!(String::from_utf8(o.stderr).unwrap().contains("tpot_ms.p50 and p99 are null: the tool's TPOT rows"));
}

#[test]
fn dstack_refuses_what_dstacks_model_rejects() {
    // 2 failed requests (dstack: failed_requests must be 0); no concurrency cap (dstack's
    // per-user rate is output_tok_per_s / workload.concurrency).
    let o = run(&["-f", "dstack", &sample("public/050-vllm.txt")]);
    assert_eq!(o.status.code(), Some(5));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("failed_requests: 2 requests failed"), "{err}");
    assert!(err.contains("workload.concurrency: the client's concurrency cap is not in the run"), "{err}");
    // 64 of the 1000 prompts asked for (the argument dump's num_prompts) succeeded.
    let o = run(&["-f", "dstack", &sample("rendered/sglang-0.5.23-goodput-cache.txt")]);
    assert_eq!(o.status.code(), Some(5));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("successful_requests: 64 of the 1000 requests asked for (num_prompts) succeeded"), "{err}");
}

#[test]
fn dstack_writes_no_object_for_a_rejected_run() {
    // vllm-s2 with an impossible TPOT block (median ten times the mean): rejected by
    // distribution-possible.
    let log = std::fs::read_to_string(sample("captured/vllm-s2.stdout.txt")).unwrap();
    let line = log.lines().find(|l| l.starts_with("Median TPOT (ms):")).unwrap();
    let forged = log.replace(line, "Median TPOT (ms):                        127.96");
    let path = std::env::temp_dir().join(format!("bn-rejected-{}.txt", std::process::id()));
    std::fs::write(&path, forged).unwrap();
    let rejected = path.to_str().unwrap();
    // One rule for every format a consumer stores: nothing written, and said so.
    for format in ["dstack", "dstack-e2e", "llmd-br"] {
        let o = run(&["-f", format, rejected]);
        assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(o.stdout.is_empty(), "{format}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("{format}: not written: the run is rejected")), "{format}: {err}");
    }
    // The library's emitter (the Python module writes through it) holds the same rule.
    let runs = common::normalize_file(&path).unwrap();
    assert_eq!(runs.len(), 1);
    for format in [OutputFormat::Dstack, OutputFormat::DstackE2e, OutputFormat::LlmdBr] {
        let mut out = Vec::new();
        let mut said = Vec::new();
        let mut emitter = Emitter::new(format, false, false);
        let mut say = |_: &bench_normalize::Run, n: Notice| said.push(n);
        emitter.run(&mut out, runs[0].clone(), &mut say).unwrap();
        emitter.finish(&mut out, &mut say).unwrap();
        assert!(out.is_empty(), "{format:?}");
        assert!(
            matches!(said.as_slice(), [Notice::Warning(m)] if m.ends_with("not written: the run is rejected")),
            "{format:?}: {said:?}"
        );
    }
    // Several runs: an entry for each of those that can be written, saying which run it is; the
    // others said on stderr.
    let o = run(&["-f", "dstack", &sample("captured/vllm-s4.stdout.txt"), rejected]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(o.status.code(), Some(1));
    let all: Value = serde_json::from_slice(&o.stdout).unwrap();
    let entries = all.as_array().unwrap();
    assert!(entries.iter().all(|e| e["input"] == sample("captured/vllm-s4.stdout.txt")), "{all}");
    let per_user: Vec<f64> = entries.iter().map(|e| e["metrics"]["per_user_tok_per_s"].as_f64().unwrap()).collect();
    let out: Vec<f64> = entries.iter().map(|e| e["metrics"]["output_tok_per_s"].as_f64().unwrap()).collect();
    let load: Vec<f64> = entries.iter().map(|e| e["load"]["max_concurrency"].as_f64().unwrap()).collect();
    assert_eq!(per_user.len(), 4);
    assert_eq!(load, [1.0, 2.0, 4.0, 8.0]);
    for ((p, o), c) in per_user.iter().zip(&out).zip(load) {
        assert!(close(*p, o / c, 1e-5), "{p} {o} {c}");
    }
}

#[test]
fn dstack_writes_the_whole_benchmark_when_the_run_states_version_and_command() {
    // A trial.json read back: it states tool, version and command, so the output is dstack's
    // whole `benchmark` object, the document's own.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dstack/documents/trial.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let o = run(&["-f", "dstack", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let back: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(back, doc["benchmark"]);
    // An empty version: dstack's model refuses the document (`dstack-model`), so nothing is written.
    let mut no_version = doc.clone();
    no_version["benchmark"]["tool_version"] = json!(" ");
    let tmp = std::env::temp_dir().join(format!("bn-trial-{}.json", std::process::id()));
    std::fs::write(&tmp, no_version.to_string()).unwrap();
    let o = run(&["-f", "dstack", tmp.to_str().unwrap()]);
    let _ = std::fs::remove_file(&tmp);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("benchmark.tool_version: dstack needs a non-empty string"));
}

/// What `run` mode will state about a run (the client's command line and version), put on a run
/// read from a captured log: the whole benchmark object, the workload from the argument dump.
#[test]
fn dstack_benchmark_workload_comes_from_the_run_with_dstacks_definitions() {
    use bench_normalize::report::Figure;
    let stated = |name: &str| {
        let log = std::fs::read_to_string(sample(&format!("captured/{name}.stdout.txt"))).unwrap();
        let t = truth(&format!("captured/{name}.truth.json"));
        let mut run = bench_normalize::normalize_str(&log, name).unwrap().remove(0);
        for (path, v) in [
            ("benchmark_tool", t["client"].as_str().unwrap()),
            ("benchmark_tool_version", t["client_version"].as_str().unwrap()),
            ("command", t["client_command"].as_str().unwrap()),
        ] {
            run.workload.set(path, &format!("workload.{path}"), Figure::Text(v.into()));
        }
        (run, t)
    };
    for (name, api) in
        [("sglang-oai-chat-s2", "chat_completions"), ("vllm-chat-s2", "chat_completions"), ("vllm-s2", "completions")]
    {
        let (run, t) = stated(name);
        let b = bench_normalize::emit::dstack(&run).unwrap_or_else(|u| panic!("{name}: {}", u.message()));
        let keys: Vec<&str> = b.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["tool", "tool_version", "command", "workload", "metrics"], "{name}");
        assert_eq!(b["tool_version"], t["client_version"]);
        let w = &b["workload"];
        assert_eq!(w["api"], api, "{name}");
        // dstack: the measured means per request, the concurrency and the requests asked for.
        for (k, truth_key) in [
            ("num_requests", "num_prompts"),
            ("input_tokens", "input_len"),
            ("output_tokens", "output_len"),
            ("concurrency", "concurrency"),
        ] {
            assert_eq!(w[k], t[truth_key], "{name}: workload.{k}");
        }
        assert!(w.get("dataset").is_none(), "{name}: the random dataset is synthetic: no dataset");
        assert_eq!(b["metrics"]["successful_requests"], w["num_requests"]);
    }
    // SGLang's native backend posts to /generate: neither of dstack's two APIs.
    let (run, _) = stated("sglang-s2");
    let u = bench_normalize::emit::dstack(&run).unwrap_err();
    assert!(
        u.message().contains(
            "workload.api: dstack knows chat_completions and completions, and this run's backend 'sglang' is neither"
        ),
        "{}",
        u.message()
    );
}

#[test]
fn dstack_e2e_is_the_proposal_with_e2e_ms() {
    let o = run(&["-f", "dstack-e2e", &sample("versions/sglang0.5.5.post1-oai-s2.stdout.txt")]);
    assert_eq!(o.status.code(), Some(0));
    let m: Value = serde_json::from_slice(&o.stdout).unwrap();
    let keys: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys[..9], DSTACK_METRICS);
    assert_eq!(keys[9], "e2e_ms");
    let tpot = m["tpot_ms"]["mean"].as_f64().unwrap();
    assert!(close(tpot, 12.8, 0.01), "{tpot}: never the ITL");
    assert!(close(m["per_user_tok_per_s"].as_f64().unwrap(), 1000.0 / tpot, 1e-4));
    assert_eq!(m["e2e_ms"]["mean"], 6682.48);
    assert_eq!(m["tpot_ms"]["p50"], Value::Null);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("dstack-e2e: tpot_ms.p50 is null"), "{err}");
}

#[test]
fn dstack_percentiles_come_from_per_request_arrays_when_there_are_some() {
    let o = run(&["-f", "dstack", &sample("captured/vllm-s2.result.json")]);
    let m: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(m["tpot_ms"]["p99"].as_f64().is_some());
    assert_eq!(m["failed_requests"], 0);
}

#[test]
fn explain_writes_out_the_derivation() {
    let o = run(&["--explain", &sample("versions/sglang0.5.5.post1-oai-s2.stdout.txt")]);
    let t = stdout(&o);
    assert!(t.contains("TPOT 12.8 ms, method e2e-ttft-tokens"), "{t}");
    assert!(t.contains("= (E2E 6682.48 - TTFT 140.74) / (8192 tokens / 16 requests - 1)"), "{t}");
    assert!(t.contains("from line 28 \"Mean E2E Latency (ms): 6682.48\""), "{t}");
    assert!(t.contains("the printed mean ITL 125.8 ms is timed per streamed chunk"), "{t}");
    assert!(t.contains("verdict: accepted"), "{t}");
}

#[test]
fn parsers_completions_and_man() {
    let o = run(&["parsers", "--format", "json"]);
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<&str> = list.as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
    for id in ["vllm-bench-serve", "sglang-bench-serving", "vllm-result-json", "sglang-result-jsonl", "dstack-preset"] {
        assert!(ids.contains(&id), "{ids:?}");
    }
    assert!(stdout(&run(&["parsers"])).contains("sglang.bench_serving"));
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = run(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0));
        assert!(stdout(&o).contains("bench-normalize"), "{shell}");
    }
    let man = stdout(&run(&["man"]));
    assert!(man.starts_with(".ie") && man.contains(".TH bench-normalize 1"));
}

/// `--format jsonl` is written with sonic-rs for speed; the contract is serde_json's bytes (what
/// `--format json` and the snapshots use). Every run of every sample must come out identical.
#[test]
fn jsonl_lines_are_serde_json_bytes() {
    let mut runs_checked = 0;
    for path in common::samples() {
        // (Inputs that are rejected as a whole have no run to write.)
        let Ok(runs) = common::normalize_file(&path) else { continue };
        for run in &runs {
            let mut line = Vec::new();
            bench_normalize::emit::write_jsonl(&mut line, run).unwrap();
            let mut expected = serde_json::to_vec(run).unwrap();
            expected.push(b'\n');
            assert!(line == expected, "{} block {}: jsonl differs from serde_json", path.display(), run.source.block);
            runs_checked += 1;
        }
    }
    assert!(runs_checked > 150, "{runs_checked}");
}

/// The JSON document written a run at a time is the document of all the runs written at once,
/// compact and pretty, for one run or several; no run, no document.
#[test]
fn the_json_report_written_run_by_run_is_the_whole_report() {
    use bench_normalize::emit::{JsonReport, write_json};
    let mut runs = Vec::new();
    for name in ["captured/vllm-s4.stdout.txt", "captured/sglang-oai-s2spec.stdout.txt", "peers/guidellm-s2.stdout.txt"]
    {
        let path = common::samples_dir().join(name);
        runs.append(&mut common::normalize_file(&path).unwrap_or_else(|e| panic!("{name}: {e}")));
    }
    assert_eq!(runs.len(), 6);
    for pretty in [false, true] {
        for n in [0, 1, 2, runs.len()] {
            let mut streamed = Vec::new();
            let mut doc = JsonReport::new(pretty);
            for run in &runs[..n] {
                doc.run(&mut streamed, run).unwrap();
            }
            doc.finish(&mut streamed).unwrap();
            let mut whole = Vec::new();
            if n > 0 {
                write_json(&mut whole, &bench_normalize::Report::new(runs[..n].to_vec()), pretty).unwrap();
            }
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                String::from_utf8(whole).unwrap(),
                "pretty {pretty}, {n} runs"
            );
        }
    }
}
