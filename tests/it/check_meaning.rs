//! `check` reads a document's meaning, not only its data (issue 28, section 2), and every object
//! the tool writes passes `check` (issue 29): through the executable.
//!
//! * a duplicate key anywhere in a document is refused (exit 3) naming its path, in a report given
//!   to `check` and in a result file given to `bench-normalize`;
//! * a canonical report's declared semantics are the definition's it names, or a contradiction
//!   (`semantics-declared`);
//! * an llm-d Benchmark Report's duration is read from its rates, so the capacity rules apply;
//! * each JSON output format's objects are accepted by `check`.

use crate::common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bench-normalize"))
}

/// The executable with `args`, `input` on stdin.
fn run(args: &[&str], input: &[u8]) -> Output {
    let mut child =
        bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn sample(path: &str) -> Vec<u8> {
    std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples").join(path)).unwrap()
}

fn dstack_benchmark() -> Value {
    let doc: Value = serde_json::from_slice(
        &std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dstack/documents/trial.json"))
            .unwrap(),
    )
    .unwrap();
    doc["benchmark"].clone()
}

/// The checks of the first run `check --format json` prints.
fn checks(o: &Output) -> Vec<Value> {
    let report: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", text(&o.stderr)));
    report["runs"][0]["checks"].as_array().cloned().unwrap_or_default()
}

fn check_status(o: &Output, id: &str) -> Option<String> {
    checks(o).iter().find(|c| c["id"] == id).map(|c| c["status"].as_str().unwrap().to_string())
}

// ---------------------------------------------------------------------------------------------
// Duplicate keys

/// dstack's report with a second `metrics` (the per-chunk ITL as TPOT), which dstack would store:
/// refused, naming the path; the honest one alone is accepted.
#[test]
fn a_second_metrics_object_is_refused_naming_its_path() {
    let honest = dstack_benchmark();
    let ok = run(&["check", "-", "--format", "json"], honest.to_string().as_bytes());
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    let mut second = honest["metrics"].clone();
    second["tpot_ms"] = json!({"mean": 125.8, "p50": 127.96, "p99": 129.07});
    let s = honest.to_string();
    let doc = format!("{}, \"metrics\": {}}}", &s[..s.len() - 1], second);
    for args in [&["check", "-"][..], &["-"][..], &["-", "--format", "dstack"][..]] {
        let o = run(args, doc.as_bytes());
        assert_eq!(o.status.code(), Some(3), "{args:?}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(err.contains("duplicate key \"metrics\": metrics"), "{err}");
        assert!(o.stdout.is_empty() || !text(&o.stdout).contains("125.8"), "{}", text(&o.stdout));
    }
}

/// A duplicate deep inside a canonical report, or in a vLLM result file read by `bench-normalize`,
/// is refused with its path and line.
#[test]
fn duplicates_at_any_depth_of_reports_and_result_files_are_refused() {
    let report = run(&["--format", "json", "-"], &sample("captured/vllm-s2.stdout.txt"));
    assert_eq!(report.status.code(), Some(0));
    let pretty: Value = serde_json::from_slice(&report.stdout).unwrap();
    let pretty = serde_json::to_string_pretty(&pretty).unwrap();
    // `"mean": ...` of reported.tpot_ms written twice.
    let at = pretty.find("\"tpot_ms\": {").unwrap();
    let mean = at + pretty[at..].find("\"mean\"").unwrap();
    let doc = format!("{}\"mean\": 125.8,\n{}", &pretty[..mean], &pretty[mean..]);
    let o = run(&["check", "-"], doc.as_bytes());
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("runs[0].reported.tpot_ms.mean"), "{err}");

    // A vLLM result file (one line) with `completed` twice.
    let file = text(&sample("captured/vllm-s2.result.json"));
    let doc = file.replacen("{", "{\"completed\": 160, ", 1);
    let o = run(&["-"], doc.as_bytes());
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("duplicate key \"completed\": completed"), "{}", text(&o.stderr));
    // The file as written is read.
    assert_eq!(run(&["-"], file.as_bytes()).status.code(), Some(0));
}

// ---------------------------------------------------------------------------------------------
// Declared semantics

fn vllm_report() -> Value {
    let o = run(&["--format", "json", "-"], &sample("captured/vllm-s2.stdout.txt"));
    assert_eq!(o.status.code(), Some(0));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn check_json(doc: &Value) -> Output {
    run(&["check", "-", "--format", "json"], doc.to_string().as_bytes())
}

fn message(o: &Output, id: &str) -> String {
    checks(o).iter().find(|c| c["id"] == id).map(|c| c["message"].as_str().unwrap().to_string()).unwrap_or_default()
}

/// The tool's own report passes; a declared meaning that is not the named definition's is
/// rejected naming the field, and the run is checked with the definition's: a doubled token total
/// behind `rates: "own-window"` still meets `throughput-totals`.
#[test]
fn a_declared_meaning_is_the_definitions_or_a_contradiction() {
    let honest = vllm_report();
    let o = check_json(&honest);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        check_status(&o, "semantics-declared").as_deref(),
        Some("pass"),
        "{}",
        message(&o, "semantics-declared")
    );

    let mut own = honest.clone();
    own["runs"][0]["source"]["semantics"]["rates"] = json!("own-window");
    let o = check_json(&own);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(check_status(&o, "semantics-declared").as_deref(), Some("fail"));
    assert!(message(&o, "semantics-declared").contains("source.semantics.rates is declared own-window"));
    assert_eq!(check_status(&o, "throughput-totals").as_deref(), Some("pass"));
    own["runs"][0]["totals"]["output_tokens"] = json!(16384);
    let o = check_json(&own);
    assert_eq!(check_status(&o, "throughput-totals").as_deref(), Some("fail"), "{}", message(&o, "throughput-totals"));

    let mut token = honest.clone();
    token["runs"][0]["source"]["semantics"]["itl"] = json!("token");
    let o = check_json(&token);
    assert_eq!(o.status.code(), Some(1));
    assert!(message(&o, "semantics-declared").contains("source.semantics.itl is declared token, but vllm-bench-serve"));

    // vLLM's TPOT rows are one value per request: declared token-weighted, they would be held to
    // the derived TPOT as a mean of tokens, and lose their per-request bounds.
    let mut weighted = honest.clone();
    weighted["runs"][0]["source"]["semantics"]["tpot_weighting"] = json!("token");
    let o = check_json(&weighted);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        message(&o, "semantics-declared").contains(
            "source.semantics.tpot_weighting is declared token, but vllm-bench-serve (variant 0.13+) has it request"
        ),
        "{}",
        message(&o, "semantics-declared")
    );
    assert!(checks(&o).iter().all(|c| !c["message"].as_str().unwrap_or("").contains("token-weighted rows")));
}

/// A report that names no built-in definition keeps its declared meaning, but an ITL declared per
/// token more than twice the token-weighted TPOT contradicts itself; at the TPOT it passes.
#[test]
fn a_per_token_itl_far_above_the_tpot_is_a_contradiction_by_itself() {
    let mut doc = vllm_report();
    let r = &mut doc["runs"][0];
    r["source"]["parser"] = json!("report");
    r["source"]["semantics"] = json!({"itl": "token"});
    r.as_object_mut().unwrap().remove("derived");
    let o = check_json(&doc);
    assert_eq!(
        check_status(&o, "semantics-declared").as_deref(),
        Some("fail"),
        "{}",
        message(&o, "semantics-declared")
    );
    assert!(message(&o, "semantics-declared").contains("is 9.83x the derived token-weighted TPOT 12.8 ms"));
    for (itl, want) in [(12.8, "pass"), (25.6, "pass"), (25.7, "fail"), (6.0, "pass")] {
        doc["runs"][0]["reported"]["itl_ms"] = json!({"mean": itl});
        let o = check_json(&doc);
        assert_eq!(
            check_status(&o, "semantics-declared").as_deref(),
            Some(want),
            "{itl}: {}",
            message(&o, "semantics-declared")
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Every object the tool writes passes `check`

/// For every sample and every JSON output format: what the tool writes with exit 0, `check`
/// accepts (exit 0), whatever its shape (a canonical report, JSON Lines of runs, dstack's
/// benchmark or metrics object or an array of them, dstack#4230's metrics object, llm-d Benchmark
/// Reports a line each).
#[test]
fn check_accepts_every_object_the_tool_writes() {
    let formats = ["json", "jsonl", "dstack", "dstack-e2e", "llmd-br"];
    let samples = common::samples();
    let jobs: Vec<(std::path::PathBuf, &str)> =
        samples.iter().flat_map(|p| formats.iter().map(move |f| (p.clone(), *f))).collect();
    let failures = std::sync::Mutex::new(Vec::new());
    let checked = std::sync::atomic::AtomicUsize::new(0);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((path, format)) = jobs.get(i) else { break };
                    let out = bin().args(["--format", format]).arg(path).output().unwrap();
                    if out.status.code() != Some(0) || out.stdout.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let o = run(&["check", "-", "--format", "json"], &out.stdout);
                    checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if o.status.code() != Some(0) {
                        failures.lock().unwrap().push(format!(
                            "{} --format {format}: check exits {:?}: {}",
                            path.display(),
                            o.status.code(),
                            text(&o.stderr).chars().take(400).collect::<String>()
                        ));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let checked = checked.into_inner();
    assert!(checked > 300, "{checked}");
    assert!(failures.is_empty(), "{} of {checked} refused:\n{}", failures.len(), failures.join("\n"));
}

/// `check`'s `dstack-model` is dstack's own verdict on each of dstack's shapes: it passes only what
/// dstack accepts. A `benchmark` object with the proposal's `e2e_ms` (a key dstack forbids) is said
/// to be one dstack refuses, the rule skipped, never passed; a bare metrics object
/// is `PresetBenchmarkMetrics` (no cross-field rule: one failed request is dstack's to accept
/// there); the proposal's metrics object is said to be one dstack would refuse, and accepted.
#[test]
fn dstack_model_is_dstacks_verdict_on_every_shape() {
    let bench = dstack_benchmark();
    let mut e2e = bench.clone();
    e2e["metrics"]["e2e_ms"] = json!({"mean": 6681.67, "p50": 6680.55, "p99": 6686.76});
    let o = check_json(&e2e);
    assert_eq!(check_status(&o, "dstack-model").as_deref(), Some("skipped"));
    assert!(
        message(&o, "dstack-model")
            .contains("would refuse it (PresetBenchmark): metrics.e2e_ms.mean: dstack does not know this key")
    );
    assert_eq!(o.status.code(), Some(0));
    // Beside another violation, the rule fails.
    e2e["metrics"]["failed_requests"] = json!(1);
    assert_eq!(check_status(&check_json(&e2e), "dstack-model").as_deref(), Some("fail"));

    let metrics = bench["metrics"].clone();
    let o = check_json(&metrics);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(check_status(&o, "dstack-model").as_deref(), Some("pass"));
    assert!(message(&o, "headline-definitions").contains("/ concurrency 4"), "{}", message(&o, "headline-definitions"));
    let mut failed = metrics.clone();
    failed["failed_requests"] = json!(1);
    assert_eq!(check_status(&check_json(&failed), "dstack-model").as_deref(), Some("pass"));
    let mut unknown = metrics.clone();
    unknown["notes"] = json!("x");
    assert_eq!(check_json(&unknown).status.code(), Some(3));
    // A per-user rate that is 1000 / TPOT is no output rate over a whole concurrency.
    let mut per_user = metrics.clone();
    per_user["per_user_tok_per_s"] = json!(78.11);
    let o = check_json(&per_user);
    assert_eq!(check_status(&o, "headline-definitions").as_deref(), Some("fail"));
    assert!(message(&o, "headline-definitions").contains("a whole concurrency: 306.47 / 78.11 = 3.92"));

    let mut proposal = metrics.clone();
    proposal["e2e_ms"] = json!({"mean": 6681.67, "p50": 6680.55, "p99": 6686.76});
    proposal["per_user_tok_per_s"] = json!(78.1134);
    let o = check_json(&proposal);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(check_status(&o, "dstack-model").as_deref(), Some("skipped"));
    assert!(message(&o, "dstack-model").contains("would refuse it (PresetBenchmarkMetrics): e2e_ms.mean"));
    proposal["per_user_tok_per_s"] = json!(76.618);
    assert_eq!(check_status(&check_json(&proposal), "headline-definitions").as_deref(), Some("fail"));
}
