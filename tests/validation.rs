//! The consistency rules, one table per rule (pass, fail and skipped, with the figures in the test),
//! hand-written reports through `check`, and the rejection of a copied ITL.

mod common;

use bench_normalize::report::{Status, TpotMethod, Verdict};
use bench_normalize::{Options, Policy, Run, normalize, normalize_str};
use serde_json::{Value, json};

/// Normalize a hand-written canonical run and return the status of one rule and its message.
fn rule(id: &str, run: Value) -> (Status, String) {
    let runs = normalize_str(&run.to_string(), "case.json").unwrap_or_else(|e| panic!("{e}"));
    let check = runs[0].checks.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no rule {id}"));
    (check.status, check.message.clone())
}

fn run_of(totals: Value, reported: Value, workload: Value) -> Value {
    json!({ "workload": workload, "totals": totals, "reported": reported })
}

/// The motivating run: concurrency 4, 96.28 s, 16384 output tokens, 32 requests.
fn motivating(tpot: Value, e2e: Option<Value>) -> Value {
    let mut reported = json!({ "ttft_ms": { "mean": 210.0 }, "tpot_ms": tpot });
    if let Some(e) = e2e {
        reported["e2e_ms"] = e;
    }
    run_of(
        json!({ "successful_requests": 32, "failed_requests": 0, "duration_s": 96.28, "output_tokens": 16384 }),
        reported,
        json!({ "max_concurrency": 4 }),
    )
}

#[test]
fn decode_capacity() {
    let (s, m) = rule("decode-capacity", motivating(json!({ "mean": 137.18 }), None));
    assert_eq!(s, Status::Fail);
    assert_eq!(
        m,
        "claimed TPOT 137.18 ms needs 2243.17 s of decode work for 16352 tokens; 4 slots x 96.28 s supply 385.12 s (5.82x), more than the 1.5x allowed"
    );
    let (s, m) = rule("decode-capacity", motivating(json!({ "mean": 12.8 }), None));
    assert_eq!(s, Status::Pass, "{m}");
    assert!(m.contains("(0.54x)"), "{m}");
    // No concurrency cap: the 32 requests are the slots.
    let mut no_cap = motivating(json!({ "mean": 137.18 }), None);
    no_cap["workload"] = json!({});
    let (s, m) = rule("decode-capacity", no_cap);
    assert_eq!(s, Status::Pass, "{m}");
    assert!(m.contains("32 requests (no concurrency cap) x 96.28 s"), "{m}");
    // No TPOT (null: absent; `{}` is a shape error, see tests/check.rs).
    let (s, _) = rule("decode-capacity", motivating(Value::Null, None));
    assert_eq!(s, Status::Skipped);
    let mut no_duration = motivating(json!({ "mean": 137.18 }), None);
    no_duration["totals"]["duration_s"] = Value::Null;
    assert_eq!(rule("decode-capacity", no_duration).0, Status::Skipped);
}

#[test]
fn decode_within_e2e() {
    // E2E consistent with the true decode rate: 210 + 511 x 12.8 = 6750.8 ms.
    let e2e = json!({ "mean": 6750.8 });
    let (s, m) = rule("decode-within-e2e", motivating(json!({ "mean": 137.18 }), Some(e2e.clone())));
    assert_eq!(s, Status::Fail);
    assert_eq!(
        m,
        "claimed TPOT 137.18 ms vs (E2E 6750.8 - TTFT 210) / (512 - 1) = 12.8 ms of decode time per token (10.72x): requests cannot decode longer than they live (allowed 1.5x)"
    );
    assert_eq!(rule("decode-within-e2e", motivating(json!({ "mean": 12.8 }), Some(e2e.clone()))).0, Status::Pass);
    // Within the tolerance: a request-weighted mean somewhat above the token-weighted one.
    assert_eq!(rule("decode-within-e2e", motivating(json!({ "mean": 18.0 }), Some(e2e))).0, Status::Pass);
    assert_eq!(rule("decode-within-e2e", motivating(json!({ "mean": 137.18 }), None)).0, Status::Skipped);
}

#[test]
fn e2e_capacity() {
    let base = |e2e: f64, conc: Option<f64>| {
        let mut reported = json!({ "e2e_ms": { "mean": e2e }, "ttft_ms": { "mean": 100.0 } });
        if let Some(c) = conc {
            reported["mean_in_flight"] = json!(c);
        }
        run_of(
            json!({ "successful_requests": 16, "duration_s": 26.74, "output_tokens": 8192 }),
            reported,
            json!({ "max_concurrency": 4 }),
        )
    };
    let (s, m) = rule("e2e-capacity", base(6682.24, Some(4.0)));
    assert_eq!(s, Status::Pass, "{m}");
    assert_eq!(
        m,
        "16 requests x E2E 6682.24 ms = 106.92 s in flight; 4 slots x 26.74 s = 106.96 s (1.00x); printed Concurrency 4 vs max concurrency 4"
    );
    // 16 x 8 s = 128 s in flight, only 107 s of slots.
    let (s, m) = rule("e2e-capacity", base(8000.0, None));
    assert_eq!(s, Status::Fail);
    assert!(m.contains("(1.20x): more time in flight than the slots allow"), "{m}");
    // A printed Concurrency above the cap.
    assert_eq!(rule("e2e-capacity", base(6682.24, Some(4.6))).0, Status::Fail);
    let mut none = base(6682.24, None);
    none["reported"] = json!({});
    assert_eq!(rule("e2e-capacity", none).0, Status::Skipped);
}

#[test]
fn latency_order() {
    let with = |reported: Value| run_of(json!({ "successful_requests": 4 }), reported, json!({}));
    assert_eq!(
        rule(
            "latency-order",
            with(json!({ "ttft_ms": { "mean": 50.0, "p50": 45.0, "p99": 90.0 }, "e2e_ms": { "mean": 900.0 } }))
        )
        .0,
        Status::Pass
    );
    let (s, m) = rule("latency-order", with(json!({ "ttft_ms": { "mean": 950.0 }, "e2e_ms": { "mean": 900.0 } })));
    assert_eq!(s, Status::Fail);
    assert_eq!(m, "mean TTFT 950 ms is not within 0..mean E2E 900 ms");
    let (s, m) =
        rule("latency-order", with(json!({ "itl_ms": { "mean": 10.0, "p50": 12.0, "p99": 11.0, "max": 20.0 } })));
    assert_eq!(s, Status::Fail);
    assert_eq!(m, "reported.itl_ms: p50 12 > p99 11");
    let (s, m) = rule("latency-order", with(json!({ "itl_ms": { "mean": 30.0, "p50": 12.0, "max": 20.0 } })));
    assert_eq!(s, Status::Fail);
    assert_eq!(m, "reported.itl_ms: mean 30 is outside min..max");
    assert_eq!(rule("latency-order", with(json!({}))).0, Status::Skipped);
}

#[test]
fn finite_values() {
    let with = |totals: Value| run_of(totals, json!({}), json!({}));
    assert_eq!(rule("finite-values", with(json!({ "successful_requests": 4, "duration_s": 1.5 }))).0, Status::Pass);
    let (s, m) = rule("finite-values", with(json!({ "successful_requests": 4, "duration_s": -1.5 })));
    assert_eq!(s, Status::Fail);
    assert_eq!(m, "not finite, negative or not whole: totals.duration_s = -1.5");
    assert_eq!(rule("finite-values", run_of(json!({}), json!({}), json!({ "backend": "vllm" }))).0, Status::Skipped);
}

#[test]
fn throughput_totals() {
    let with = |out: f64, req: f64| {
        run_of(
            json!({ "successful_requests": 16, "duration_s": 26.74, "output_tokens": 8192 }),
            json!({ "output_tok_per_s": out, "request_per_s": req }),
            json!({}),
        )
    };
    let (s, m) = rule("throughput-totals", with(306.32, 0.60));
    assert_eq!(s, Status::Pass, "{m}");
    assert_eq!(
        m,
        "output_tok_per_s printed 306.32 vs 8192 output tokens / 26.74 s = 306.36; request_per_s printed 0.6 vs 16 successful requests / 26.74 s = 0.5984"
    );
    let (s, _) = rule("throughput-totals", with(350.0, 0.60));
    assert_eq!(s, Status::Fail);
    assert_eq!(
        rule("throughput-totals", run_of(json!({ "duration_s": 2.0 }), json!({}), json!({}))).0,
        Status::Skipped
    );
}

#[test]
fn tpot_agreement() {
    let with = |tpot: f64| {
        run_of(
            json!({ "successful_requests": 16, "duration_s": 26.74, "output_tokens": 8192 }),
            json!({ "ttft_ms": { "mean": 140.14 }, "e2e_ms": { "mean": 6682.24 }, "tpot_ms": { "mean": tpot }, "itl_ms": { "mean": 125.81 } }),
            json!({ "max_concurrency": 4 }),
        )
    };
    let (s, m) = rule("tpot-agreement", with(12.80));
    assert_eq!(
        (s, m.as_str()),
        (Status::Pass, "claimed TPOT 12.8 ms vs derived 12.8 ms (e2e-ttft-tokens, 0.0% apart)")
    );
    assert_eq!(rule("tpot-agreement", with(14.5)).0, Status::Fail);
    let mut itl = with(125.81);
    itl["source"] = json!({ "semantics": { "itl": "chunk" } });
    let (s, m) = rule("tpot-agreement", itl);
    assert_eq!(s, Status::Fail);
    assert!(m.ends_with("the claimed figure equals the per-chunk mean ITL 125.81 ms: ITL was copied as TPOT"), "{m}");
    let mut no_e2e = with(12.8);
    no_e2e["reported"]["e2e_ms"] = Value::Null;
    assert_eq!(rule("tpot-agreement", no_e2e).0, Status::Skipped);
}

#[test]
fn itl_is_per_chunk() {
    let with = |itl: f64, per: &str| {
        json!({
            "source": { "semantics": { "itl": per } },
            "totals": { "successful_requests": 16, "duration_s": 26.74, "output_tokens": 8192 },
            "reported": { "ttft_ms": { "mean": 140.14 }, "e2e_ms": { "mean": 6682.24 }, "itl_ms": { "mean": itl }, "accept_length": 9.82 }
        })
    };
    let (s, m) = rule("itl-is-per-chunk", with(125.81, "chunk"));
    assert_eq!(s, Status::Fail);
    assert_eq!(
        m,
        "mean ITL 125.81 ms is 9.83x TPOT 12.8 ms: streamed chunks carry ~9.83 tokens (speculative decoding or stream batching); ITL is per chunk, never a TPOT; the server reports accept length 9.82"
    );
    assert_eq!(rule("itl-is-per-chunk", with(13.0, "chunk")).0, Status::Pass);
    assert_eq!(rule("itl-is-per-chunk", with(12.8, "token")).0, Status::Skipped);
    // Info never rejects.
    let runs = normalize_str(&with(125.81, "chunk").to_string(), "x.json").unwrap();
    assert_eq!(runs[0].verdict, Verdict::Accepted);
}

#[test]
fn token_count_source() {
    let with = |retok: u64, semantics: &str| {
        json!({
            "source": { "semantics": { "output_tokens": semantics } },
            "totals": { "successful_requests": 16, "output_tokens": 8192, "output_tokens_retokenized": retok },
        })
    };
    let (s, m) = rule("token-count-source", with(8192, "server-or-requested"));
    assert_eq!((s, m.as_str()), (Status::Pass, "generated 8192 vs retokenized 8192 (0.0% apart)"));
    let (s, m) = rule("token-count-source", with(7000, "server-or-requested"));
    assert_eq!(s, Status::Fail);
    assert!(m.starts_with("generated 8192 vs retokenized 7000 (14.6% apart)"), "{m}");
    assert_eq!(rule("token-count-source", with(7000, "requested")).0, Status::Fail);
    assert_eq!(rule("token-count-source", with(8192, "requested")).0, Status::Pass);
    let (s, _) = rule("token-count-source", json!({ "totals": { "output_tokens": 10 } }));
    assert_eq!(s, Status::Skipped);
}

#[test]
fn failed_requests() {
    let with = |f: Value| run_of(json!({ "successful_requests": 12, "failed_requests": f }), json!({}), json!({}));
    let (s, m) = rule("failed-requests", with(json!(4)));
    assert_eq!((s, m.as_str()), (Status::Fail, "4 requests failed; latency figures cover the 12 successful ones only"));
    assert_eq!(rule("failed-requests", with(json!(0))).0, Status::Pass);
    assert_eq!(rule("failed-requests", with(Value::Null)).0, Status::Skipped);
}

#[test]
fn warnings_reject_only_with_strict() {
    let run = run_of(json!({ "successful_requests": 12, "failed_requests": 4 }), json!({}), json!({}));
    let strict = Options { policy: Policy { strict: true, ..Policy::default() }, ..Options::default() };
    for (opts, verdict) in [(Options::default(), Verdict::Accepted), (strict, Verdict::Rejected)] {
        let mut runs: Vec<Run> = Vec::new();
        normalize(run.to_string().as_bytes(), "x.json", &opts, &mut |r| {
            runs.push(r);
            Ok(())
        })
        .unwrap();
        assert_eq!(runs[0].verdict, verdict);
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-written reports: `check`

fn dstack(tpot: Value, e2e: Option<Value>) -> Value {
    let mut metrics = json!({
        "successful_requests": 32, "failed_requests": 0, "duration_seconds": 96.28,
        "total_input_tokens": 4194304, "total_output_tokens": 16384,
        "output_tok_per_s": 170.17, "per_user_tok_per_s": 42.54,
        "ttft_ms": { "mean": 210.0, "p50": 205.3, "p99": 260.8 },
        "tpot_ms": tpot
    });
    if let Some(e) = e2e {
        metrics["e2e_ms"] = e;
    }
    json!({
        "tool": "python -m sglang.bench_serving",
        "tool_version": "0.5.5.post1",
        "command": "python -m sglang.bench_serving --backend sglang-oai --max-concurrency 4 --num-prompts 32",
        "workload": { "api": "completions", "dataset": "random", "num_requests": 32, "input_tokens": 131072, "output_tokens": 512, "concurrency": 4 },
        "metrics": metrics
    })
}

fn check(report: &Value) -> Result<Run, bench_normalize::Error> {
    let opts = Options { reports_only: true, ..Options::default() };
    let mut runs = Vec::new();
    normalize(report.to_string().as_bytes(), "report.json", &opts, &mut |r| {
        runs.push(r);
        Ok(())
    })?;
    Ok(runs.remove(0))
}

fn failed(run: &Run) -> Vec<&str> {
    run.checks
        .iter()
        .filter(|c| c.status == Status::Fail && c.severity == bench_normalize::report::Severity::Error)
        .map(|c| c.id.as_str())
        .collect()
}

#[test]
fn the_motivating_dstack_report_is_rejected_by_decode_capacity_alone() {
    let run = check(&dstack(json!({ "mean": 137.18, "p50": 55.34, "p99": 1160.43 }), None)).unwrap();
    assert_eq!(run.source.parser, "dstack-preset");
    assert_eq!(run.verdict, Verdict::Rejected);
    assert_eq!(failed(&run), ["decode-capacity"]);
    assert_eq!(run.derived.tpot_ms.method, Some(TpotMethod::Claimed));
}

#[test]
fn with_a_consistent_e2e_it_is_rejected_by_decode_within_e2e_too() {
    let e2e = json!({ "mean": 6750.8, "p50": 6748.0, "p99": 6790.2 });
    let run = check(&dstack(json!({ "mean": 137.18, "p50": 55.34, "p99": 1160.43 }), Some(e2e.clone()))).unwrap();
    assert_eq!(failed(&run), ["decode-capacity", "decode-within-e2e"]);
    // And the derivation gives the true rate.
    assert_eq!(run.derived.tpot_ms.method, Some(TpotMethod::E2eTtftTokens));
    assert!((run.derived.tpot_ms.mean.unwrap() - 12.8).abs() < 0.01);
    let ok = check(&dstack(json!({ "mean": 12.8, "p50": 12.8, "p99": 12.9 }), Some(e2e))).unwrap();
    assert_eq!(ok.verdict, Verdict::Accepted, "{:?}", failed(&ok));
}

#[test]
fn the_same_report_with_the_true_tpot_is_accepted() {
    let run = check(&dstack(json!({ "mean": 12.8, "p50": 12.8, "p99": 12.9 }), None)).unwrap();
    assert_eq!(run.verdict, Verdict::Accepted);
    // dstack's model requires tpot_ms: null is a shape error, not "TPOT unknown".
    let e = check(&dstack(Value::Null, None)).unwrap_err();
    assert_eq!(e.exit_code(), bench_normalize::ExitCode::NoResult);
    assert!(e.to_string().contains("metrics.tpot_ms: expected dstack's PresetBenchmarkLatency"), "{e}");
}

#[test]
fn report_shape_errors_name_the_json_path() {
    let tpot = || json!({ "mean": 12.8, "p50": 12.8, "p99": 12.9 });
    let mut r = dstack(tpot(), None);
    r["metrics"]["duration_seconds"] = json!("96.28");
    let e = check(&r).unwrap_err().to_string();
    assert_eq!(e, "report.json: metrics.duration_seconds: expected a number > 0, found the string \"96.28\"");
    let mut r = dstack(tpot(), None);
    r["metrics"].as_object_mut().unwrap().remove("total_output_tokens");
    let e = check(&r).unwrap_err().to_string();
    assert_eq!(
        e,
        "report.json: metrics.total_output_tokens: expected a whole number >= 0 (required), found nothing: the key is missing"
    );
    let mut r = dstack(tpot(), None);
    r["metrics"]["successful_requests"] = json!(31.5);
    let e = check(&r).unwrap_err().to_string();
    assert_eq!(e, "report.json: metrics.successful_requests: expected a whole number >= 0, found the number 31.5");
    let mut r = dstack(tpot(), None);
    r["metrics"]["tpot_ms"]["mean"] = json!("fast");
    let e = check(&r).unwrap_err().to_string();
    assert_eq!(e, "report.json: metrics.tpot_ms.mean: expected a number >= 0, found the string \"fast\"");
    assert_eq!(check(&r).unwrap_err().exit_code(), bench_normalize::ExitCode::NoResult);
}

#[test]
fn canonical_reports_are_checked_too() {
    // A bench-normalize report read back: the same verdict, the rows kept.
    let log = std::fs::read_to_string(common::samples_dir().join("captured/sglang-oai-s2.stdout.txt")).unwrap();
    let runs = normalize_str(&log, "log").unwrap();
    let report = serde_json::to_value(bench_normalize::Report::new(runs.clone())).unwrap();
    let again = check(&report).unwrap();
    assert_eq!(again.verdict, Verdict::Accepted);
    assert_eq!(again.rows, runs[0].rows);
    assert_eq!(again.derived, runs[0].derived);
    // A hand-written canonical run that claims the ITL in derived.tpot_ms.
    let claim = json!({
        "workload": { "max_concurrency": 4 },
        "totals": { "successful_requests": 32, "duration_s": 96.28, "output_tokens": 16384 },
        "derived": { "tpot_ms": { "mean": 137.18 } }
    });
    let run = check(&claim).unwrap();
    assert_eq!(failed(&run), ["decode-capacity"]);
    assert!(run.notes.iter().any(|n| n.code == "claimed-tpot"));
    // Wrong types name the path.
    let bad = json!({ "runs": [ { "totals": { "output_tokens": "many" } } ], "schema_version": 1 });
    let e = check(&bad).unwrap_err().to_string();
    assert_eq!(e, "report.json: runs[0].totals.output_tokens: expected a whole number >= 0, found the string \"many\"");
    let bad = json!({ "totals": { "duration_s": 1.0 }, "reported": { "ttft_ms": { "average": 3.0, "worst": 9.0 } } });
    let e = check(&bad).unwrap_err().to_string();
    // Every unknown key is an error (the last one is returned, the others go to diagnostics).
    assert_eq!(
        e,
        "report.json: reported.ttft_ms.worst: expected a statistic's name (mean, min, p50, p90, p99, p99.9, max, std), found an unknown key"
    );
}

#[test]
fn check_refuses_benchmark_output() {
    let log = std::fs::read_to_string(common::samples_dir().join("captured/vllm-s1.stdout.txt")).unwrap();
    let opts = Options { reports_only: true, ..Options::default() };
    let e = normalize(log.as_bytes(), "run.log", &opts, &mut |_| Ok(())).unwrap_err();
    assert_eq!(e.exit_code(), bench_normalize::ExitCode::NoResult);
    assert!(e.to_string().contains("a JSON report"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// A captured log whose TPOT rows are replaced by its ITL rows is rejected.

#[test]
fn a_capture_with_itl_copied_into_the_tpot_rows_is_rejected() {
    for (file, e2e) in [
        ("captured/vllm-s2.stdout.txt", true),
        ("captured/sglang-oai-s2.stdout.txt", true),
        ("versions/vllm0.13.0-defpm-goodput-s2.stdout.txt", false),
    ] {
        let log = std::fs::read_to_string(common::samples_dir().join(file)).unwrap();
        let itl: Vec<(String, String)> = log
            .lines()
            .filter_map(|l| {
                l.strip_suffix(' ')
                    .unwrap_or(l)
                    .split_once(" ITL (ms):")
                    .map(|(stat, v)| (stat.to_string(), v.to_string()))
            })
            .collect();
        let forged: String = log
            .lines()
            .map(|l| match l.split_once(" TPOT (ms):") {
                Some((stat, _)) => match itl.iter().find(|(s, _)| s == stat) {
                    Some((_, v)) => format!("{stat} TPOT (ms):{v}\n"),
                    None => format!("{l}\n"),
                },
                None => format!("{l}\n"),
            })
            .collect();
        assert_ne!(forged, log);
        let runs = normalize_str(&forged, file).unwrap();
        let run = &runs[0];
        assert_eq!(run.verdict, Verdict::Rejected, "{file}");
        let f = failed(run);
        assert!(f.contains(&"decode-capacity"), "{file}: {f:?}");
        if e2e {
            assert!(f.contains(&"decode-within-e2e"), "{file}: {f:?}");
            // The derivation ignores the forged rows and still finds the true TPOT.
            assert!((run.derived.tpot_ms.mean.unwrap() - 12.8).abs() < 0.05);
        }
        // The unforged capture is accepted.
        assert_eq!(normalize_str(&log, file).unwrap()[0].verdict, Verdict::Accepted, "{file}");
    }
}

// ---------------------------------------------------------------------------------------------
// dstack's own documents: `trial.json`, `final_report.json` (tests/dstack/documents)

fn document(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dstack/documents").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn check_of<'r>(run: &'r Run, id: &str) -> &'r bench_normalize::report::Check {
    run.checks.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no {id} check"))
}

#[test]
fn check_reads_dstacks_trial_and_final_report_documents() {
    for (name, variant) in [("trial.json", "trial"), ("final_report.json", "final-report")] {
        let run = check(&document(name)).unwrap();
        assert_eq!(run.source.parser, "dstack-agent-document", "{name}");
        assert_eq!(run.source.variant.as_deref(), Some(variant), "{name}");
        assert_eq!(run.verdict, Verdict::Accepted, "{name}: {:?}", failed(&run));
        assert_eq!(check_of(&run, "dstack-model").status, Status::Pass, "{name}");
        // Its figures are read as the preset shape's: the claimed TPOT, the workload.
        assert_eq!(run.derived.tpot_ms.method, Some(TpotMethod::Claimed));
        assert_eq!(run.workload.number("num_prompts"), Some(16.0));
        assert_eq!(run.workload.number("max_concurrency"), Some(4.0));
    }
}

#[test]
fn dstacks_model_rules_reject_what_dstack_would_refuse_to_store() {
    let mut doc = document("trial.json");
    doc["benchmark"]["metrics"]["failed_requests"] = json!(1);
    doc["benchmark"]["metrics"]["tpot_ms"]["p99"] = Value::Null;
    doc["benchmark"]["metrics"]["e2e_ms"] = json!({ "mean": 6682.0, "p50": 6682.0, "p99": 6690.0 });
    let run = check(&doc).unwrap();
    assert_eq!(run.verdict, Verdict::Rejected);
    assert!(failed(&run).contains(&"dstack-model"), "{:?}", failed(&run));
    let m = &check_of(&run, "dstack-model").message;
    for part in [
        "benchmark.metrics.e2e_ms: dstack does not know this key",
        "benchmark.metrics.tpot_ms.p99: dstack needs a value, got null",
        "benchmark.metrics.failed_requests: 1: dstack's model refuses a benchmark with failed requests",
    ] {
        assert!(m.contains(part), "{part}: {m}");
    }
    // The bare preset shape keeps the proposal's e2e_ms (dstack#4230); a null TPOT is a shape error
    // there, as dstack's model requires the figure.
    let e2e = json!({ "mean": 6750.8, "p50": 6748.0, "p99": 6790.2 });
    let tpot = json!({ "mean": 12.8, "p50": 12.8, "p99": 12.9 });
    let run = check(&dstack(tpot, Some(e2e.clone()))).unwrap();
    assert_eq!(check_of(&run, "dstack-model").status, Status::Pass, "{}", check_of(&run, "dstack-model").message);
    assert_eq!(check(&dstack(Value::Null, Some(e2e))).unwrap_err().exit_code(), bench_normalize::ExitCode::NoResult);
    // A failed trial records no benchmark: nothing to check.
    let mut failed_trial = document("trial.json");
    failed_trial["benchmark"] = Value::Null;
    failed_trial["failed"] = json!(true);
    assert_eq!(check(&failed_trial).unwrap_err().exit_code(), bench_normalize::ExitCode::NoResult);
    // Runs read from a tool's output have no dstack-model check.
    let log = std::fs::read_to_string(common::samples_dir().join("captured/vllm-s2.stdout.txt")).unwrap();
    assert!(normalize_str(&log, "log").unwrap()[0].checks.iter().all(|c| c.id != "dstack-model"));
}
