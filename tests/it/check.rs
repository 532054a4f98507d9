//! `check` verifies a report, it does not trust it (issue 16): every shape error of a document at
//! once with its JSON path (exit 3), a canonical report's derived figures recomputed and a stated
//! one that its inputs do not give rejected (exit 1), headline figures held to their definitions.
//!
//! The examples of the issue are regression tests through the executable; the property tests feed
//! `check` (the library, as the executable calls it) every sample's own report, unmodified (always
//! accepted when the sample was) and mutated (never accepted).

use crate::common;

use std::process::{Command, Output, Stdio};

use bench_normalize::report::{Status, Verdict};
use bench_normalize::{Error, Options, Report, Run, Sink, normalize};
use proptest::prelude::*;
use serde_json::{Value, json};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bench-normalize"))
}

/// `bench-normalize check -` with the document on stdin, plus extra arguments.
fn check_cli(doc: &Value, extra: &[&str]) -> Output {
    use std::io::Write;
    let mut child = bin()
        .arg("check")
        .arg("-")
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = doc.to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(data.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What `check` gives for a document: the runs, or every error (in order).
struct Checked {
    runs: Vec<Run>,
    errors: Vec<Error>,
}

impl Sink for Checked {
    fn run(&mut self, run: Run) -> Result<(), Error> {
        self.runs.push(run);
        Ok(())
    }
    fn diagnostic(&mut self, e: Error) {
        self.errors.push(e);
    }
}

fn check_lib(doc: &Value) -> Checked {
    let opts = Options { reports_only: true, ..Options::default() };
    let mut c = Checked { runs: Vec::new(), errors: Vec::new() };
    if let Err(e) = normalize(doc.to_string().as_bytes(), "report.json", &opts, &mut c) {
        c.errors.push(e);
    }
    c
}

/// The canonical report the tool writes for a sample (every run of it).
fn report_of(path: &std::path::Path) -> Option<(Value, Vec<Run>)> {
    let runs = common::normalize_file(path).ok()?;
    Some((serde_json::to_value(Report::new(runs.clone())).unwrap(), runs))
}

fn sample_report(name: &str) -> Value {
    report_of(&common::samples_dir().join(name)).unwrap().0
}

/// The motivating sample: SGLang 0.5.5.post1, no TPOT row, derived TPOT 12.80 ms.
const SGLANG: &str = "versions/sglang0.5.5.post1-oai-s2.stdout.txt";

/// A valid dstack preset benchmark of the same run, with dstack's definitions: output_tok_per_s
/// is 8192 / 26.75, per_user_tok_per_s is that over concurrency 4.
fn dstack_doc() -> Value {
    json!({
        "tool": "python -m sglang.bench_serving",
        "tool_version": "0.5.5.post1",
        "command": "python -m sglang.bench_serving --backend sglang-oai --num-prompts 16 --max-concurrency 4",
        "workload": { "api": "completions", "num_requests": 16, "input_tokens": 1024, "output_tokens": 512, "concurrency": 4 },
        "metrics": {
            "successful_requests": 16, "failed_requests": 0, "duration_seconds": 26.75,
            "total_input_tokens": 16384, "total_output_tokens": 8192,
            "output_tok_per_s": 306.24, "per_user_tok_per_s": 76.56,
            "ttft_ms": { "mean": 140.74, "p50": 139.66, "p99": 146.16 },
            "tpot_ms": { "mean": 12.8, "p50": 12.8, "p99": 12.81 }
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Regression tests: the examples of the issue, through the executable

#[test]
fn the_unmodified_reports_are_accepted() {
    let o = check_cli(&sample_report(SGLANG), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = check_cli(&dstack_doc(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_wrong_type_for_a_stat_block_is_an_error_naming_its_path() {
    for (bad, found) in [
        (json!(137.18), "found the number 137.18"),
        (json!("137.18"), "found the string \"137.18\""),
        (json!([137.18]), "found a list"),
        (json!({}), "found an empty object"),
    ] {
        let mut r = sample_report(SGLANG);
        r["runs"][0]["reported"]["tpot_ms"] = bad.clone();
        let o = check_cli(&r, &[]);
        assert_eq!(o.status.code(), Some(3), "{bad}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("runs[0].reported.tpot_ms: expected statistics") && e.contains(found), "{bad}: {e}");

        let mut d = dstack_doc();
        d["metrics"]["tpot_ms"] = bad.clone();
        let o = check_cli(&d, &[]);
        assert_eq!(o.status.code(), Some(3), "{bad}: {}", stderr(&o));
        let e = stderr(&o);
        if bad == json!({}) {
            // An empty object: each required statistic is missing.
            for stat in ["mean", "p50", "p99"] {
                assert!(e.contains(&format!("metrics.tpot_ms.{stat}: expected a number >= 0 (required)")), "{e}");
            }
        } else {
            assert!(
                e.contains("metrics.tpot_ms: expected dstack's PresetBenchmarkLatency") && e.contains(found),
                "{e}"
            );
        }
    }
}

#[test]
fn every_shape_error_of_a_document_is_reported_at_once() {
    let mut r = sample_report(SGLANG);
    let run = &mut r["runs"][0];
    run["reported"]["tpot_ms"] = json!(137.18);
    run["totals"]["output_tokens"] = json!("8192");
    run["derived"]["per_user_decode_tok_per_s"] = json!([78.1]);
    run["verdict"] = json!("fine");
    run["rows"][0]["line"] = json!(-1);
    run["reportd"] = json!({});
    let o = check_cli(&r, &[]);
    assert_eq!(o.status.code(), Some(3));
    let e = stderr(&o);
    for want in [
        "runs[0].reported.tpot_ms: expected statistics",
        "runs[0].totals.output_tokens: expected a whole number >= 0, found the string \"8192\"",
        "runs[0].derived.per_user_decode_tok_per_s: expected a number or null, found a list",
        "runs[0].verdict: expected one of \"accepted\", \"rejected\", \"unusable\", found the string \"fine\"",
        "runs[0].rows[0].line: expected a whole number >= 0, found the number -1",
        "runs[0].reportd: expected only the keys of a run",
    ] {
        assert!(e.contains(want), "{want}\n{e}");
    }
    assert_eq!(e.lines().count(), 6, "{e}");
    // As JSON diagnostics: one object per error, each with its path in the message, exit code 3.
    let o = check_cli(&r, &["--error-format", "json"]);
    assert_eq!(o.status.code(), Some(3));
    let lines: Vec<Value> = stderr(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 6, "{lines:?}");
    assert!(lines.iter().all(|l| l["code"] == "report-shape"), "{lines:?}");

    // The dstack shape: every error too, unknown keys included (dstack forbids them).
    let mut d = dstack_doc();
    d["metrics"]["tpot_ms"] = json!(137.18);
    d["metrics"]["duration_seconds"] = json!(0);
    d["workload"]["api"] = json!("chat");
    d["metrics"]["itl_ms"] = json!({ "mean": 125.8, "p50": 128.0, "p99": 131.5 });
    d["notes"] = json!("by hand");
    let o = check_cli(&d, &[]);
    assert_eq!(o.status.code(), Some(3));
    let e = stderr(&o);
    for want in [
        "metrics.tpot_ms: expected dstack's PresetBenchmarkLatency (an object), found the number 137.18",
        "metrics.duration_seconds: expected a number > 0, found the number 0",
        "workload.api: expected one of \"chat_completions\", \"completions\", found the string \"chat\"",
        "metrics.itl_ms: expected only the keys of dstack's PresetBenchmarkMetrics",
        "notes: expected only the keys of dstack's PresetBenchmark",
    ] {
        assert!(e.contains(want), "{want}\n{e}");
    }
    assert_eq!(e.lines().count(), 5, "{e}");
}

#[test]
fn a_null_tpot_is_no_dstack_report() {
    // dstack's model requires tpot_ms (and the agent is told never to invent it): a report
    // claiming 500 tok/s per user with tpot_ms null is refused, naming the path.
    let mut d = dstack_doc();
    d["metrics"]["tpot_ms"] = Value::Null;
    d["metrics"]["per_user_tok_per_s"] = json!(500.0);
    let o = check_cli(&d, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("metrics.tpot_ms: expected dstack's PresetBenchmarkLatency (an object), found null"));
}

#[test]
fn an_edited_derived_tpot_is_rejected_naming_both_figures() {
    let mut r = sample_report(SGLANG);
    assert_eq!(r["runs"][0]["derived"]["tpot_ms"]["mean"], json!(12.8018));
    r["runs"][0]["derived"]["tpot_ms"]["mean"] = json!(1.0);
    let o = check_cli(&r, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("derived-restated: derived.tpot_ms.mean is 1 but the report's own figures give 12.8018"), "{e}");
    // The report printed carries the recomputed figure, and says why it was rejected.
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(out["runs"][0]["derived"]["tpot_ms"]["mean"], json!(12.8018));
    assert_eq!(out["runs"][0]["verdict"], "rejected");

    // The per-user rate edited alone.
    let mut r = sample_report(SGLANG);
    r["runs"][0]["derived"]["per_user_decode_tok_per_s"] = json!(500);
    let o = check_cli(&r, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("derived.per_user_decode_tok_per_s is 500 but the report's own figures give 78.114"));
}

#[test]
fn per_request_figures_are_checked_against_what_the_report_carries() {
    let r = sample_report("captured/vllm-s2.result.json");
    assert_eq!(r["runs"][0]["derived"]["tpot_ms"]["method"], "per-request");
    assert_eq!(check_cli(&r, &[]).status.code(), Some(0));
    // Edited: the tool's own per-request TPOT mean (12.80) says otherwise.
    let mut bad = r.clone();
    bad["runs"][0]["derived"]["tpot_ms"]["mean"] = json!(6.4);
    let o = check_cli(&bad, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("derived.tpot_ms.mean 6.4 (per request) is not the tool's own per-request TPOT mean 12.8")
    );
    // ... and with the tool's TPOT rows removed, nothing confirms it: an error saying why.
    bad["runs"][0]["reported"].as_object_mut().unwrap().remove("tpot_ms");
    let o = check_cli(&bad, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("derived.tpot_ms.mean 6.4 (per request) cannot be verified"), "{}", stderr(&o));
    // The token-weighted mean is (E2E - TTFT) / (N_out / R - 1).
    let mut bad = r.clone();
    bad["runs"][0]["derived"]["tpot_ms"]["token_weighted_mean"] = json!(10.0);
    let o = check_cli(&bad, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("derived.tpot_ms.token_weighted_mean 10 is not (E2E"), "{}", stderr(&o));
    // A per-request method without the arrays' summary is no per-request figure.
    let mut bad = r.clone();
    bad["runs"][0]["derived"].as_object_mut().unwrap().remove("per_request");
    assert_eq!(check_cli(&bad, &[]).status.code(), Some(1));
    // A TPOT percentile the tool did not print cannot be confirmed: left out, with a note.
    let o = check_cli(&r, &[]);
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    let run = &out["runs"][0];
    assert!(r["runs"][0]["derived"]["tpot_ms"]["p90"].is_number());
    assert!(run["derived"]["tpot_ms"].get("p90").is_none(), "{}", run["derived"]["tpot_ms"]);
    assert!(run["notes"].as_array().unwrap().iter().any(|n| n["code"] == "unverified-left-out"));
}

#[test]
fn a_canonical_per_user_rate_without_a_tpot_cannot_be_verified() {
    // 500 tok/s per user, no TPOT and no E2E to derive one: an error that says why.
    let r = json!({
        "workload": { "max_concurrency": 4 },
        "totals": { "successful_requests": 16, "duration_s": 26.75, "output_tokens": 8192 },
        "source": { "parser": "report" },
        "reported": { "per_user_tok_per_s": 500.0, "tpot_ms": null },
        "derived": { "per_user_decode_tok_per_s": 500.0 }
    });
    let o = check_cli(&r, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("headline-definitions: reported.per_user_tok_per_s 500 cannot be verified"), "{e}");
    assert!(e.contains("derived.per_user_decode_tok_per_s is 500 but cannot be recomputed"), "{e}");
    // With a TPOT, the rate is 1000 / TPOT: 78.11 for 12.8 ms, never 500.
    let mut r = r;
    r["reported"]["tpot_ms"] = json!({ "mean": 12.8 });
    r["derived"] = json!({});
    let o = check_cli(&r, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(
        "reported.per_user_tok_per_s 500 is not 1000 / TPOT = 1000 / 12.8 ms = 78.12 (TPOT method: claimed)"
    ));
    r["reported"]["per_user_tok_per_s"] = json!(78.1);
    let o = check_cli(&r, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn dstack_headlines_follow_dstack_definitions() {
    // per_user_tok_per_s is output_tok_per_s / concurrency (dstack's own instructions).
    let mut d = dstack_doc();
    d["metrics"]["per_user_tok_per_s"] = json!(500.0);
    let o = check_cli(&d, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "metrics.per_user_tok_per_s 500 is not output_tok_per_s / workload.concurrency = 306.24 / 4 = 76.56"
        ),
        "{}",
        stderr(&o)
    );
    // 1000 / TPOT is a different figure, and the message says so.
    d["metrics"]["per_user_tok_per_s"] = json!(78.13);
    let o = check_cli(&d, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("it is 1000 / tpot_ms.mean 12.8, which dstack does not call per_user_tok_per_s"));
    // output_tok_per_s is total_output_tokens / duration_seconds.
    let mut d = dstack_doc();
    d["metrics"]["output_tok_per_s"] = json!(3062.4);
    d["metrics"]["per_user_tok_per_s"] = json!(765.6);
    let o = check_cli(&d, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "metrics.output_tok_per_s 3062.4 is not total_output_tokens / duration_seconds = 8192 / 26.75 = 306.24"
        ),
        "{}",
        stderr(&o)
    );
    // Rounding is allowed: the duration written 26.8 (26.75 rounded) and rates from the exact one.
    let mut d = dstack_doc();
    d["metrics"]["duration_seconds"] = json!(26.8);
    let o = check_cli(&d, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn dstack_model_rules_apply() {
    let mut d = dstack_doc();
    d["metrics"]["failed_requests"] = json!(1);
    let o = check_cli(&d, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "dstack-model: dstack's model would refuse it: metrics.failed_requests: 1: dstack's model refuses"
        ),
        "{}",
        stderr(&o)
    );
    let mut d = dstack_doc();
    d["workload"]["num_requests"] = json!(32);
    let o = check_cli(&d, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("metrics.successful_requests: 16 is not workload.num_requests 32"), "{}", stderr(&o));
    // A credential in the command is refused, as dstack does; a variable is fine.
    let mut d = dstack_doc();
    d["command"] = json!("curl -H 'Authorization: Bearer sk1234567890abcdefgh' ...");
    let o = check_cli(&d, &[]);
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("command: expected a command without a credential"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("567890abcdefgh"), "the token is not echoed: {}", stderr(&o));
    d["command"] = json!("curl -H 'Authorization: Bearer $TOKEN' ...");
    assert_eq!(check_cli(&d, &[]).status.code(), Some(0));
}

// ---------------------------------------------------------------------------------------------
// Properties over every sample's own report

/// Every sample's report (the runs the tool gives for it), made once.
fn sample_reports() -> &'static Vec<(String, Value, Vec<Run>)> {
    static REPORTS: std::sync::OnceLock<Vec<(String, Value, Vec<Run>)>> = std::sync::OnceLock::new();
    REPORTS.get_or_init(|| {
        common::samples()
            .iter()
            .filter_map(|p| report_of(p).map(|(v, runs)| (common::sample_name(p), v, runs)))
            .collect()
    })
}

#[test]
fn every_samples_report_checks_as_it_was_made() {
    let reports = sample_reports();
    assert!(reports.len() > 100, "{}", reports.len());
    let mut runs_checked = 0;
    for (name, doc, runs) in reports {
        let c = check_lib(doc);
        assert!(c.errors.is_empty(), "{name}: {:?}", c.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>());
        assert_eq!(c.runs.len(), runs.len(), "{name}");
        for (again, first) in c.runs.iter().zip(runs) {
            let failed: Vec<&str> =
                again.checks.iter().filter(|c| c.status == Status::Fail).map(|c| c.message.as_str()).collect();
            assert_eq!(again.verdict, first.verdict, "{name}: {failed:?}");
            for id in ["derived-restated", "headline-definitions"] {
                let c = again.checks.iter().find(|c| c.id == id).unwrap();
                assert_ne!(c.status, Status::Fail, "{name}: {}", c.message);
            }
            assert_eq!(again.derived.tpot_ms.mean, first.derived.tpot_ms.mean, "{name}");
            assert_eq!(again.derived.per_user_decode_tok_per_s, first.derived.per_user_decode_tok_per_s, "{name}");
            runs_checked += 1;
        }
    }
    assert!(runs_checked > 150, "{runs_checked}");
}

/// Every position in a run's JSON with a value, as a path of keys and indices.
fn positions(v: &Value, at: Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
    match v {
        Value::Object(m) => {
            for (k, sub) in m {
                let mut p = at.clone();
                p.push(PathStep::Key(k.clone()));
                out.push(p.clone());
                positions(sub, p, out);
            }
        }
        Value::Array(items) => {
            for (i, sub) in items.iter().enumerate() {
                let mut p = at.clone();
                p.push(PathStep::Index(i));
                out.push(p.clone());
                positions(sub, p, out);
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn at_mut<'v>(v: &'v mut Value, path: &[PathStep]) -> &'v mut Value {
    path.iter().fold(v, |v, s| match s {
        PathStep::Key(k) => &mut v[k.as_str()],
        PathStep::Index(i) => &mut v[*i],
    })
}

fn shown(path: &[PathStep]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            PathStep::Key(k) if s.is_empty() => s.push_str(k),
            PathStep::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            PathStep::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// A value of another JSON type than `v` (never null, which many places allow: absent).
fn other_type(v: &Value, pick: usize) -> Value {
    let candidates = [json!(7.5), json!("x"), json!([1]), json!({ "x": 1 }), json!(true)];
    let same = |c: &Value| std::mem::discriminant(c) == std::mem::discriminant(v) || (c.is_boolean() && v.is_boolean());
    let others: Vec<&Value> = candidates.iter().filter(|c| !same(c)).collect();
    others[pick % others.len()].clone()
}

/// Whether a position takes a value of any type: figures outside the vocabulary (a report may
/// carry its own) and what lies below them.
fn free(path: &[PathStep]) -> bool {
    let keys: Vec<&str> = path
        .iter()
        .filter_map(|s| match s {
            PathStep::Key(k) => Some(k.as_str()),
            _ => None,
        })
        .collect();
    // runs / <group> / <figure path...>
    let Some(group) = keys.get(1) else { return false };
    if !["workload", "totals", "reported"].contains(group) || keys.len() < 3 {
        return false;
    }
    // A known figure, or a group above known figures, is typed.
    let known = |path: &str| vocabulary().iter().any(|p| p == path);
    let mut canonical = format!("{group}.{}", keys[2]);
    if known(&canonical) {
        return false;
    }
    for k in &keys[3..] {
        canonical = format!("{canonical}.{k}");
        if known(&canonical) {
            return false;
        }
    }
    !vocabulary().iter().any(|p| p.starts_with(&format!("{canonical}.")))
}

/// The paths of the canonical vocabulary, read from its data file (`crates/core/src/vocabulary.toml`, which
/// build.rs compiles in).
fn vocabulary() -> &'static [String] {
    static PATHS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    PATHS.get_or_init(|| {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/crates/core/src/vocabulary.toml")).unwrap();
        let doc: toml::Table = text.parse().unwrap();
        let fields = doc["field"].as_array().unwrap();
        let paths: Vec<String> = fields.iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
        assert!(paths.len() > 50, "{} fields", paths.len());
        paths
    })
}

/// The stated derived figures of a run that `check` recomputes or verifies.
const DERIVED: &[&[&str]] = &[
    &["tpot_ms", "mean"],
    &["tpot_ms", "p50"],
    &["tpot_ms", "p99"],
    &["tpot_ms", "token_weighted_mean"],
    &["per_user_decode_tok_per_s"],
    &["output_tok_per_s"],
    &["request_per_s"],
    &["mean_in_flight"],
    &["slot_utilization"],
    &["tokens_per_chunk"],
];

fn accepted_reports() -> Vec<&'static (String, Value, Vec<Run>)> {
    sample_reports().iter().filter(|(_, _, runs)| runs.len() == 1 && runs[0].verdict == Verdict::Accepted).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A value of another type anywhere in a sample's report is an error naming its path (exit 3).
    #[test]
    fn a_type_change_anywhere_is_a_shape_error_at_its_path(which in any::<prop::sample::Index>(), pos in any::<prop::sample::Index>(), pick in 0usize..4) {
        let reports = accepted_reports();
        let (name, doc, _) = reports[which.index(reports.len())];
        let mut doc = doc.clone();
        let mut all = Vec::new();
        positions(&doc["runs"][0], vec![PathStep::Key("runs".into()), PathStep::Index(0)], &mut all);
        let all: Vec<Vec<PathStep>> = all.into_iter().filter(|p| !free(p)).collect();
        let path = &all[pos.index(all.len())];
        let here = at_mut(&mut doc, path);
        prop_assume!(!here.is_null());
        let new = other_type(here, pick);
        *here = new.clone();
        let c = check_lib(&doc);
        let want = shown(path);
        prop_assert!(c.runs.is_empty(), "{name}: {want} = {new} accepted");
        prop_assert!(c.errors.iter().all(|e| e.exit_code() == bench_normalize::ExitCode::NoResult));
        prop_assert!(
            c.errors.iter().any(|e| e.to_string().contains(&format!("report.json: {want}"))),
            "{name}: {want} = {new}: {:?}", c.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
        );
    }

    /// A stated derived figure edited by more than its tolerance is never accepted.
    #[test]
    fn an_edited_derived_figure_is_never_accepted(which in any::<prop::sample::Index>(), field in 0..DERIVED.len(), factor in prop_oneof![0.01f64..0.95, 1.05f64..100.0], drop_tool_tpot in any::<bool>()) {
        let reports = accepted_reports();
        let (name, doc, _) = reports[which.index(reports.len())];
        let mut doc = doc.clone();
        // The tool's own TPOT rows removed too: the edit must not become the claim that checks it.
        if drop_tool_tpot
            && let Some(reported) = doc["runs"][0]["reported"].as_object_mut() {
                reported.remove("tpot_ms");
            }
        let mut here = &mut doc["runs"][0]["derived"];
        for k in DERIVED[field] {
            here = &mut here[*k];
        }
        let Some(x) = here.as_f64() else { return Ok(()) };
        prop_assume!(x > 0.0);
        *here = json!(x * factor);
        let c = check_lib(&doc);
        prop_assert!(c.errors.is_empty(), "{:?}", c.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>());
        let run = &c.runs[0];
        prop_assert_eq!(run.verdict, Verdict::Rejected, "{}: derived.{} {} -> {} accepted", name, DERIVED[field].join("."), x, x * factor);
    }
}

/// dstack documents made from the samples' runs, with dstack's definitions (rates rounded to 2
/// decimals as an agent writes them): each accepted run that has every figure dstack requires.
fn dstack_docs() -> Vec<(String, Value)> {
    let r2 = |x: f64| (x * 100.0).round() / 100.0;
    let mut out = Vec::new();
    for (name, _, runs) in sample_reports() {
        for run in runs.iter().filter(|r| r.verdict == Verdict::Accepted) {
            let num = |g: &bench_normalize::report::Figures, k: &str| g.number(k);
            let (Some(r), Some(d), Some(n), Some(ni)) = (
                num(&run.totals, "successful_requests"),
                num(&run.totals, "duration_s"),
                num(&run.totals, "output_tokens"),
                num(&run.totals, "input_tokens"),
            ) else {
                continue;
            };
            if num(&run.totals, "failed_requests").unwrap_or(0.0) != 0.0 || r < 1.0 || n / r < 2.0 {
                continue;
            }
            let ttft = run.reported.stat("ttft_ms");
            let stat3 = |s: Option<&bench_normalize::report::Stat>| -> Option<Value> {
                let s = s?;
                use bench_normalize::report::StatKey;
                Some(
                    json!({ "mean": s.get(StatKey::Mean)?, "p50": s.get(StatKey::P(50.0))?, "p99": s.get(StatKey::P(99.0))? }),
                )
            };
            let t = &run.derived.tpot_ms;
            let (Some(ttft), Some(mean), Some(p50), Some(p99)) = (stat3(ttft), t.mean, t.p50, t.p99) else { continue };
            let c = num(&run.workload, "max_concurrency").unwrap_or(r).min(r);
            let rate = r2(n / d);
            out.push((
                format!("{name} #{}", run.source.block),
                json!({
                    "tool": run.source.tool, "tool_version": "1", "command": "bench",
                    "workload": { "api": "completions", "num_requests": r as u64, "input_tokens": (ni / r).round().max(1.0) as u64,
                                  "output_tokens": (n / r).round() as u64, "concurrency": c as u64 },
                    "metrics": {
                        "successful_requests": r as u64, "failed_requests": 0, "duration_seconds": d,
                        "total_input_tokens": ni as u64, "total_output_tokens": n as u64,
                        "output_tok_per_s": rate, "per_user_tok_per_s": r2(rate / c),
                        "ttft_ms": ttft, "tpot_ms": { "mean": mean, "p50": p50, "p99": p99 }
                    }
                }),
            ));
        }
    }
    out
}

#[test]
fn every_samples_dstack_report_is_accepted() {
    let docs = dstack_docs();
    assert!(docs.len() > 40, "{}", docs.len());
    for (name, doc) in &docs {
        let c = check_lib(doc);
        assert!(c.errors.is_empty(), "{name}: {:?}", c.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>());
        let run = &c.runs[0];
        let failed: Vec<&str> =
            run.checks.iter().filter(|c| c.status == Status::Fail).map(|c| c.message.as_str()).collect();
        assert_eq!(run.verdict, Verdict::Accepted, "{name}: {failed:?}\n{doc}");
        // The canonical report `check` prints checks again, as it is.
        let again = check_lib(&serde_json::to_value(Report::new(c.runs.clone())).unwrap());
        assert!(
            again.errors.is_empty(),
            "{name}: {:?}",
            again.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
        );
        assert_eq!(again.runs[0].verdict, Verdict::Accepted, "{name}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// A dstack headline rate edited by more than rounding can explain is never accepted.
    #[test]
    fn an_edited_dstack_headline_is_never_accepted(which in any::<prop::sample::Index>(), per_user in any::<bool>(), factor in prop_oneof![0.01f64..0.97, 1.03f64..100.0]) {
        let docs = dstack_docs();
        let (name, doc) = &docs[which.index(docs.len())];
        let mut doc = doc.clone();
        let key = if per_user { "per_user_tok_per_s" } else { "output_tok_per_s" };
        let x = doc["metrics"][key].as_f64().unwrap();
        doc["metrics"][key] = json!(x * factor);
        let c = check_lib(&doc);
        prop_assert!(c.errors.is_empty());
        prop_assert_eq!(c.runs[0].verdict, Verdict::Rejected, "{}: {} {} -> {} accepted", name, key, x, x * factor);
    }

    /// A value of another type at any position of a dstack report is an error naming its path.
    #[test]
    fn a_type_change_in_a_dstack_report_is_a_shape_error(which in any::<prop::sample::Index>(), pos in any::<prop::sample::Index>(), pick in 0usize..4) {
        let docs = dstack_docs();
        let (name, doc) = &docs[which.index(docs.len())];
        let mut doc = doc.clone();
        let mut all = Vec::new();
        positions(&doc, Vec::new(), &mut all);
        let path = &all[pos.index(all.len())];
        let here = at_mut(&mut doc, path);
        let new = other_type(here, pick);
        *here = new.clone();
        let c = check_lib(&doc);
        let want = shown(path);
        prop_assert!(c.runs.is_empty(), "{name}: {want} = {new} accepted");
        prop_assert!(
            c.errors.iter().any(|e| e.to_string().contains(&format!("report.json: {want}"))),
            "{name}: {want} = {new}: {:?}", c.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
        );
    }
}

/// The walk agrees with the project's own JSON Schema (`bench-normalize schema`): what the schema
/// refuses, the walk refuses too (the walk is stricter: unknown keys, empty statistics), and the
/// report is not read.
#[test]
fn what_the_json_schema_refuses_the_walk_refuses() {
    let schema = bench_normalize::report::schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let (_, doc, _) = accepted_reports()[0];
    assert!(validator.is_valid(doc));
    let mut all = Vec::new();
    positions(doc, Vec::new(), &mut all);
    let mut refused = 0;
    for path in all.iter().filter(|p| !free(p)) {
        for pick in 0..4 {
            let mut d = doc.clone();
            let here = at_mut(&mut d, path);
            *here = other_type(here, pick);
            if !validator.is_valid(&d) {
                refused += 1;
                // Refused by the reader of reports too (as `check` reads them): exit 3.
                let opts = Options { reports_only: true, ..Options::default() };
                let read = normalize(d.to_string().as_bytes(), "mutated.json", &opts, &mut |_| Ok(()));
                let e = read.expect_err(&shown(path));
                assert_eq!(e.exit_code(), bench_normalize::ExitCode::NoResult, "{}: {e}", shown(path));
            }
        }
    }
    assert!(refused > 50, "{refused}");
}

/// Through the executable: one report of every sample, then `check` of it: the same verdict for
/// every run, and exit 1 exactly when one of them was rejected.
#[test]
fn the_executable_checks_its_own_report_of_every_sample() {
    let samples: Vec<String> = common::samples().iter().map(|p| p.display().to_string()).collect();
    let made = bin().args(&samples).args(["--format", "json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&made.stdout).unwrap();
    let runs = report["runs"].as_array().unwrap();
    assert!(runs.len() > 150, "{}", runs.len());
    let o = check_cli(&report, &[]);
    let again: Value = serde_json::from_slice(&o.stdout).unwrap();
    let verdicts = |v: &Value| v["runs"].as_array().unwrap().iter().map(|r| r["verdict"].clone()).collect::<Vec<_>>();
    assert_eq!(verdicts(&again), verdicts(&report));
    // Exit 3 when a run is unusable (it outranks a rejection), else 1 when one is rejected.
    let any = |verdict: &str| verdicts(&report).iter().any(|v| v == verdict);
    let want = if any("unusable") {
        3
    } else if any("rejected") {
        1
    } else {
        0
    };
    assert_eq!(o.status.code(), Some(want), "{}", stderr(&o));
    assert!(!stderr(&o).contains("derived-restated") && !stderr(&o).contains("headline-definitions"), "{}", stderr(&o));
}

/// Hand-written canonical runs made from the samples' runs: `reported.per_user_tok_per_s` is
/// `1000 / TPOT` (rounded to 2 decimals as a person writes it).
fn hand_written_runs() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (name, _, runs) in sample_reports() {
        for run in runs.iter().filter(|r| r.verdict == Verdict::Accepted) {
            let Some(t) = run.derived.tpot_ms.mean.filter(|t| *t > 0.0) else { continue };
            let mut v = serde_json::to_value(run).unwrap();
            v["source"]["parser"] = json!("report");
            v["reported"]["per_user_tok_per_s"] = json!((100_000.0 / t).round() / 100.0);
            out.push((format!("{name} #{}", run.source.block), v));
        }
    }
    out
}

#[test]
fn hand_written_per_user_rates_of_1000_over_tpot_are_accepted() {
    let runs = hand_written_runs();
    assert!(runs.len() > 100, "{}", runs.len());
    for (name, v) in &runs {
        let c = check_lib(v);
        assert!(c.errors.is_empty(), "{name}: {:?}", c.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>());
        let failed: Vec<&str> =
            c.runs[0].checks.iter().filter(|c| c.status == Status::Fail).map(|c| c.message.as_str()).collect();
        assert_eq!(c.runs[0].verdict, Verdict::Accepted, "{name}: {failed:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// A hand-written per-user rate off its definition by more than rounding is never accepted.
    #[test]
    fn an_edited_canonical_per_user_rate_is_never_accepted(which in any::<prop::sample::Index>(), factor in prop_oneof![0.01f64..0.97, 1.03f64..100.0]) {
        let runs = hand_written_runs();
        let (name, v) = &runs[which.index(runs.len())];
        let mut v = v.clone();
        let x = v["reported"]["per_user_tok_per_s"].as_f64().unwrap();
        v["reported"]["per_user_tok_per_s"] = json!(x * factor);
        let c = check_lib(&v);
        prop_assert!(c.errors.is_empty());
        prop_assert_eq!(c.runs[0].verdict, Verdict::Rejected, "{}: per_user_tok_per_s {} -> {} accepted", name, x, x * factor);
    }
}
