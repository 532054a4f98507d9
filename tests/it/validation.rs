//! The consistency rules, one table per rule (pass, fail and skipped, with the figures in the test),
//! hand-written reports through `check`, and the rejection of a copied ITL.

use crate::common;

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

/// The motivating run: concurrency 4, 96.28 s, 16384 output tokens, 32 requests of 512 tokens
/// asked (each request's cap, so every request has 512 tokens).
fn motivating(tpot: Value, e2e: Option<Value>) -> Value {
    let mut reported = json!({ "ttft_ms": { "mean": 210.0 }, "tpot_ms": tpot });
    if let Some(e) = e2e {
        reported["e2e_ms"] = e;
    }
    run_of(
        json!({ "successful_requests": 32, "failed_requests": 0, "duration_s": 96.28, "output_tokens": 16384 }),
        reported,
        json!({ "max_concurrency": 4, "output_len": 512 }),
    )
}

const EQUAL: &str =
    "every request has 512 output tokens (16384 tokens = 32 requests x the requested 512, each request's cap)";

#[test]
fn decode_capacity() {
    let (s, m) = rule("decode-capacity", motivating(json!({ "mean": 137.18 }), None));
    assert_eq!(s, Status::Fail);
    assert_eq!(
        m,
        format!(
            "claimed TPOT 137.18 ms needs 2243.17 s of decode work for 16352 tokens; 4 slots x 96.28 s supply 385.12 s (5.82x); {EQUAL}: more than the 1.5x allowed"
        )
    );
    let (s, m) = rule("decode-capacity", motivating(json!({ "mean": 12.8 }), None));
    assert_eq!(s, Status::Pass, "{m}");
    assert!(m.contains("(0.54x)"), "{m}");
    // Output lengths not known to be equal: a request-weighted mean bounds no decode work.
    let mut varying = motivating(json!({ "mean": 137.18 }), None);
    varying["workload"]["output_len"] = json!(1024);
    let (s, m) = rule("decode-capacity", varying);
    assert_eq!(s, Status::Skipped, "{m}");
    assert!(m.starts_with("output lengths are not known to be equal"), "{m}");
    // No concurrency cap: the 32 requests are the slots.
    let mut no_cap = motivating(json!({ "mean": 137.18 }), None);
    no_cap["workload"] = json!({ "output_len": 512 });
    let (s, m) = rule("decode-capacity", no_cap);
    assert_eq!(s, Status::Pass, "{m}");
    assert!(m.contains("32 requests (no concurrency cap) x 96.28 s"), "{m}");
    // No TPOT (null: absent; `{}` is a shape error, see tests/it/check.rs).
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
        format!(
            "claimed TPOT 137.18 ms vs (E2E 6750.8 - TTFT 210) / (512 - 1) = 12.8 ms of decode time per token (10.72x); {EQUAL}: requests cannot decode longer than they live (allowed 1.5x)"
        )
    );
    assert_eq!(rule("decode-within-e2e", motivating(json!({ "mean": 12.8 }), Some(e2e.clone()))).0, Status::Pass);
    // Within the tolerance.
    assert_eq!(rule("decode-within-e2e", motivating(json!({ "mean": 18.0 }), Some(e2e.clone()))).0, Status::Pass);
    // Lengths not known to be equal: only a request's lifetime bounds its TPOT.
    let mut varying = motivating(json!({ "mean": 137.18, "p99": 1160.43 }), Some(e2e));
    varying["workload"]["output_len"] = Value::Null;
    let (s, m) = rule("decode-within-e2e", varying.clone());
    assert_eq!(s, Status::Pass, "{m}");
    assert_eq!(m, "the TPOT rows' p99 1160.43 ms vs the duration, 96.28 s");
    // A TPOT longer than any request lived.
    varying["reported"]["tpot_ms"]["p99"] = json!(7000.0);
    varying["reported"]["e2e_ms"]["max"] = json!(6800.0);
    let (s, m) = rule("decode-within-e2e", varying);
    assert_eq!(s, Status::Fail, "{m}");
    assert!(
        m.starts_with("the TPOT rows' p99 7000 ms vs the longest E2E latency, 6800 ms: a request cannot take longer per token than it lives"),
        "{m}"
    );
    // No E2E and no duration: nothing to bound the TPOT with.
    let mut none = motivating(json!({ "mean": 137.18 }), None);
    none["totals"]["duration_s"] = Value::Null;
    assert_eq!(rule("decode-within-e2e", none).0, Status::Skipped);
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
    let run = run_of(
        json!({ "successful_requests": 12, "failed_requests": 4 }),
        json!({ "ttft_ms": { "mean": 100.0 } }),
        json!({}),
    );
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
    // The E2E rebuilt from the claim (equal lengths) overfills the slots too.
    assert_eq!(failed(&run), ["decode-capacity", "e2e-capacity"]);
    assert_eq!(run.derived.tpot_ms.method, Some(TpotMethod::Claimed));
}

#[test]
fn with_a_consistent_e2e_it_is_rejected_by_decode_within_e2e_too() {
    let e2e = json!({ "mean": 6750.8, "p50": 6748.0, "p99": 6790.2 });
    let run = check(&dstack(json!({ "mean": 137.18, "p50": 55.34, "p99": 1160.43 }), Some(e2e.clone()))).unwrap();
    assert_eq!(failed(&run), ["decode-capacity", "decode-within-e2e", "tpot-bounds"]);
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
    assert!(run.notes.iter().any(|n| n.code == "claimed-tpot"));
    // Output lengths unknown: the claim cannot be tested, and the report says so.
    assert_eq!(failed(&run), Vec::<&str>::new());
    assert_eq!(run.derived.tpot_ms.verified, Some(false));
    assert!(run.derived.tpot_ms.unverified_reason.as_deref().unwrap().starts_with("the report's claim, unverified"));
    // With the requested length, each request's cap, equal to the mean: tested, and rejected.
    let mut claim = claim;
    claim["workload"]["output_len"] = json!(512);
    let run = check(&claim).unwrap();
    assert_eq!(failed(&run), ["decode-capacity"]);
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
// A captured log whose TPOT rows are replaced by its ITL rows.
//
// Output lengths in a stdout block are not known to be equal, and a request-weighted mean TPOT can
// be any multiple of the token-weighted one (short requests with long TPOTs), so a copy is not a
// provable contradiction: with E2E printed the derived TPOT (from E2E, TTFT and tokens) is the
// figure emitted, and the copy is a `tpot-agreement` warning; without E2E the copied figure is
// emitted as the tool's claim, marked unverified. With equal lengths known (a report's requested
// output length as each request's cap) the copy is rejected: see the dstack tests above.

fn forge_itl_into_tpot(log: &str) -> String {
    let itl: Vec<(String, String)> = log
        .lines()
        .filter_map(|l| {
            l.strip_suffix(' ').unwrap_or(l).split_once(" ITL (ms):").map(|(stat, v)| (stat.to_string(), v.to_string()))
        })
        .collect();
    log.lines()
        .map(|l| match l.split_once(" TPOT (ms):") {
            Some((stat, _)) => match itl.iter().find(|(s, _)| s == stat) {
                Some((_, v)) => format!("{stat} TPOT (ms):{v}\n"),
                None => format!("{l}\n"),
            },
            None => format!("{l}\n"),
        })
        .collect()
}

fn check_of<'r>(run: &'r Run, id: &str) -> &'r bench_normalize::report::Check {
    run.checks.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no rule {id}"))
}

#[test]
fn a_capture_with_itl_copied_into_the_tpot_rows_never_emits_the_itl_as_a_verified_tpot() {
    for (file, e2e) in [
        ("captured/vllm-s2.stdout.txt", true),
        ("captured/sglang-oai-s2.stdout.txt", true),
        ("versions/vllm0.13.0-defpm-goodput-s2.stdout.txt", false),
    ] {
        let log = std::fs::read_to_string(common::samples_dir().join(file)).unwrap();
        let forged = forge_itl_into_tpot(&log);
        assert_ne!(forged, log);
        let runs = normalize_str(&forged, file).unwrap();
        let run = &runs[0];
        let tpot = &run.derived.tpot_ms;
        if e2e {
            // The derivation ignores the forged rows and finds the true TPOT; the copy is named.
            assert!((tpot.mean.unwrap() - 12.8).abs() < 0.05, "{file}: {tpot:?}");
            // Verified, or the run is rejected (the forged rows allow no request as fast as the
            // derived figure: tpot-bounds from below).
            assert!(tpot.verified == Some(true) || run.verdict == Verdict::Rejected, "{file}: {tpot:?}");
            let c = check_of(run, "tpot-agreement");
            assert_eq!(c.status, Status::Fail, "{file}");
            assert!(c.message.ends_with("ITL was copied as TPOT"), "{file}: {}", c.message);
        } else {
            // The claim is emitted as the tool's, and said to be unverified.
            assert_eq!(tpot.method, Some(TpotMethod::ToolTpot));
            assert_eq!(tpot.verified, Some(false), "{file}");
            assert!(tpot.unverified_reason.as_deref().unwrap().starts_with("the tool's claim, unverified"), "{file}");
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
    // The bare preset shape reads the proposal's e2e_ms (dstack#4230), but dstack's model refuses
    // the key: the rule says so and is skipped, never passed (issue 29); a null TPOT is a shape
    // error there, as dstack's model requires the figure.
    let e2e = json!({ "mean": 6750.8, "p50": 6748.0, "p99": 6790.2 });
    let tpot = json!({ "mean": 12.8, "p50": 12.8, "p99": 12.9 });
    let run = check(&dstack(tpot, Some(e2e.clone()))).unwrap();
    let rule = check_of(&run, "dstack-model");
    assert_eq!(rule.status, Status::Skipped, "{}", rule.message);
    assert!(rule.message.contains("dstack 0.22.5 would refuse it"), "{}", rule.message);
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

// ---------------------------------------------------------------------------------------------
// Issue 16 regressions.

/// Every figure in a vLLM stdout block is replaced: `label: value` rows keep their padding.
fn set_row(log: &str, label: &str, value: &str) -> String {
    let mut found = false;
    let out: String = log
        .lines()
        .map(|l| {
            if l.starts_with(label) {
                found = true;
                format!("{label:<40} {value:<10}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert!(found, "no row {label}");
    out
}

#[test]
fn an_output_token_total_that_counts_chunks_is_rejected_naming_both_figures() {
    // vllm-s2spec: ~10 tokens per chunk, 16 requests of 512 tokens; its 832 decode chunks + 16
    // first chunks given as the token total: the derived TPOT becomes the per-chunk ITL (~128),
    // the tool's TPOT rows say 12.8.
    let log = std::fs::read_to_string(common::samples_dir().join("captured/vllm-s2spec.stdout.txt")).unwrap();
    let forged = set_row(&log, "Total generated tokens:", "848");
    let run = &normalize_str(&forged, "x").unwrap()[0];
    assert_eq!(run.verdict, Verdict::Rejected);
    let c = check_of(run, "tpot-bounds");
    assert_eq!(c.status, Status::Fail);
    assert_eq!(
        c.message,
        "derived TPOT 125.8 ms (e2e-ttft-tokens) is above 1.5 x (p99 12.81 + 1 requests above it x the longest E2E latency numpy's P99 6694.09 ms over 16 requests allows, 7875.41 ms / 832 decode tokens) + one-token requests' ends = 33.67 ms: the derived TPOT is the per-chunk ITL 125.8 ms: the output-token total counts streamed chunks, not tokens"
    );
    // The true total passes the same bound.
    let ok = &normalize_str(&log, "x").unwrap()[0];
    assert_eq!(check_of(ok, "tpot-bounds").status, Status::Pass, "{}", check_of(ok, "tpot-bounds").message);
}

#[test]
fn tpot_bounds() {
    let with = |tpot: Value, out: u64| {
        run_of(
            json!({ "successful_requests": 16, "duration_s": 26.74, "output_tokens": out }),
            json!({ "ttft_ms": { "mean": 140.14 }, "e2e_ms": { "mean": 6682.24 }, "tpot_ms": tpot }),
            json!({ "max_concurrency": 4 }),
        )
    };
    // Derived (6682.24 - 140.14) / (8192 / 16 - 1) = 12.8: within every bound.
    let (s, m) = rule("tpot-bounds", with(json!({ "mean": 12.8, "p50": 12.8, "p99": 12.81, "max": 12.9 }), 8192));
    assert_eq!(s, Status::Pass, "{m}");
    // The rows far above the derived figure: honest when short requests have long TPOTs.
    let (s, m) = rule("tpot-bounds", with(json!({ "mean": 128.0, "p50": 128.0, "p99": 135.0 }), 8192));
    assert_eq!(s, Status::Pass, "{m}");
    // Derived above the rows' max: a weighted mean of the per-request TPOTs cannot be.
    let (s, m) = rule("tpot-bounds", with(json!({ "mean": 12.8, "max": 12.9 }), 4096));
    assert_eq!(s, Status::Fail);
    assert!(m.starts_with("derived TPOT 25.66 ms (e2e-ttft-tokens) is above the TPOT rows' max 12.9 ms"), "{m}");
    // Derived below the rows' min.
    let (s, m) = rule("tpot-bounds", with(json!({ "mean": 30.0, "min": 20.0 }), 8192));
    assert_eq!(s, Status::Fail);
    assert!(m.starts_with("derived TPOT 12.8 ms (e2e-ttft-tokens) is below the TPOT rows' min 20 ms"), "{m}");
    // No derivation independent of the rows.
    let mut no_e2e = with(json!({ "mean": 12.8 }), 8192);
    no_e2e["reported"]["e2e_ms"] = Value::Null;
    assert_eq!(rule("tpot-bounds", no_e2e).0, Status::Skipped);
}

#[test]
fn a_statistic_block_impossible_for_non_negative_values_is_rejected() {
    // The example: mean 12.80, median 127.96, p99 129.07.
    let run = run_of(
        json!({ "successful_requests": 16, "duration_s": 26.74, "output_tokens": 8192 }),
        json!({ "ttft_ms": { "mean": 140.14 }, "tpot_ms": { "mean": 12.8, "p50": 127.96, "p99": 129.07 } }),
        json!({ "max_concurrency": 4 }),
    );
    let (s, m) = rule("distribution-possible", run.clone());
    assert_eq!(s, Status::Fail);
    assert_eq!(
        m,
        "impossible statistics: reported.tpot_ms: mean 12.8 is below (1 - 0.5) x p50 127.96 = 63.98: at least 50% of the values are >= p50, so the mean of non-negative values is at least that"
    );
    let runs = normalize_str(&run.to_string(), "x.json").unwrap();
    assert_eq!(runs[0].verdict, Verdict::Rejected);
    // The same block in a dstack report, as `--format dstack` used to write it.
    let run = check(&dstack(json!({ "mean": 12.8, "p50": 127.96, "p99": 129.07 }), None)).unwrap();
    assert_eq!(failed(&run), ["distribution-possible"]);
}

#[test]
fn distribution_possible() {
    let with = |stat: Value| {
        run_of(json!({ "successful_requests": 10, "duration_s": 30.0 }), json!({ "e2e_ms": stat }), json!({}))
    };
    let ok = |stat: Value| {
        let (s, m) = rule("distribution-possible", with(stat.clone()));
        assert_eq!(s, Status::Pass, "{stat}: {m}");
    };
    let bad = |stat: Value, says: &str| {
        let (s, m) = rule("distribution-possible", with(stat.clone()));
        assert_eq!(s, Status::Fail, "{stat}: {m}");
        assert!(m.contains(says), "{stat}: {m}");
    };
    // Heavy tails are possible: one value of 67678 among 100 small ones.
    ok(json!({ "mean": 1852.87, "p50": 152.41, "p99": 67678.0 }));
    // Exactly at the bounds, with 2-decimal rounding.
    ok(json!({ "mean": 50.0, "p50": 100.0 }));
    ok(json!({ "mean": 50.0, "p50": 100.01 }));
    bad(json!({ "mean": 49.0, "p50": 100.0 }), "mean 49 is below (1 - 0.5) x p50 100 = 50");
    bad(json!({ "mean": 9.0, "p90": 100.0 }), "at least 10% of the values are >= p90");
    // Max over the requests: 10 requests, one of 1000 ms gives a mean of at least 100.
    ok(json!({ "mean": 100.0, "max": 1000.0 }));
    bad(json!({ "mean": 99.0, "max": 1000.0 }), "mean 99 is below max 1000 / 10 requests");
    // std: at most sqrt((max - mean)(mean - min)) (x sqrt 2 for a sample std).
    ok(json!({ "mean": 5.0, "min": 0.0, "max": 10.0, "std": 5.0 }));
    ok(json!({ "mean": 5.0, "min": 0.0, "max": 10.0, "std": 7.07 }));
    bad(json!({ "mean": 5.0, "min": 0.0, "max": 10.0, "std": 7.2 }), "std 7.2 is more than values within 0..10");
    // |mean - median| <= std.
    ok(json!({ "mean": 10.0, "p50": 8.0, "std": 2.0 }));
    bad(json!({ "mean": 10.0, "p50": 5.0, "std": 2.0 }), "more than one std 2 apart");
    assert_eq!(rule("distribution-possible", with(json!({ "p50": 3.0 }))).0, Status::Skipped);
}

/// The real vLLM ROCm run of issue 16 (1000 requests at rate 250, output lengths varying through
/// early EOS): RECONSTRUCTED from the figures the issue quotes (the paste itself is not in the
/// corpus): Mean TPOT 1852.87, Median 152.41, P99 67678 ms and an E2E-derived TPOT of 152.07 ms;
/// the duration, totals, TTFT, ITL and E2E rows are chosen to give exactly that derived TPOT and
/// the two ratios the old rules printed (`decode-capacity` 7.57x, `decode-within-e2e` 12.18x).
const ROCM_RECONSTRUCTED: &str = "\
============ Serving Benchmark Result ============
Successful requests:                     1000
Failed requests:                         0
Request rate configured (RPS):           250.00
Benchmark duration (s):                  90.21
Total input tokens:                      1024000
Total generated tokens:                  369560
Request throughput (req/s):              11.09
Output token throughput (tok/s):         4096.66
Total Token throughput (tok/s):          15447.95
---------------Time to First Token----------------
Mean TTFT (ms):                          1532.18
Median TTFT (ms):                        1207.55
P99 TTFT (ms):                           4893.20
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          1852.87
Median TPOT (ms):                        152.41
P99 TPOT (ms):                           67678.00
---------------Inter-token Latency----------------
Mean ITL (ms):                           151.66
Median ITL (ms):                         139.02
P99 ITL (ms):                            611.47
----------------End-to-end Latency----------------
Mean E2EL (ms):                          57578.97
Median E2EL (ms):                        58120.33
P99 E2EL (ms):                           88410.65
==================================================
";

#[test]
fn the_rocm_run_with_early_eos_is_accepted() {
    let run = &normalize_str(ROCM_RECONSTRUCTED, "rocm.txt").unwrap()[0];
    let errors: Vec<String> = run
        .checks
        .iter()
        .filter(|c| c.status == Status::Fail && c.severity == bench_normalize::report::Severity::Error)
        .map(|c| format!("{}: {}", c.id, c.message))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(run.verdict, Verdict::Accepted);
    let tpot = &run.derived.tpot_ms;
    assert_eq!((tpot.mean, tpot.method), (Some(152.07), Some(TpotMethod::E2eTtftTokens)));
    // The two figures differ 12.18x, which unequal lengths explain: a warning that says so.
    let c = check_of(run, "tpot-agreement");
    assert_eq!(c.status, Status::Fail);
    assert!(c.message.contains("request-weighted mean differs from the token-weighted"), "{}", c.message);
}

#[test]
fn a_cut_off_block_is_a_warning_and_unusable_when_tpot_is_lost() {
    // Cut before its closing line, every key figure printed: accepted, with a warning.
    let log = std::fs::read_to_string(common::samples_dir().join("public/078-vllm.txt")).unwrap();
    let run = &normalize_str(&log, "078").unwrap()[0];
    assert_eq!(run.verdict, Verdict::Accepted);
    let c = check_of(run, "complete-block");
    assert_eq!((c.severity, c.status), (bench_normalize::report::Severity::Warning, Status::Fail));
    // Cut before the TPOT and E2E rows: nothing to derive TPOT from, the run is unusable.
    let log = std::fs::read_to_string(common::samples_dir().join("noisy/cut-off-then-next-run.txt")).unwrap();
    let runs = normalize_str(&log, "cut").unwrap();
    assert_eq!(runs[0].verdict, Verdict::Unusable);
    let c = check_of(&runs[0], "key-figures");
    assert!(c.message.starts_with("the block was cut off after line 14"), "{}", c.message);
    assert!(c.message.contains("no TPOT row, and mean E2E latency to derive one"), "{}", c.message);
}

#[test]
fn nothing_usable_is_not_accepted() {
    let log = std::fs::read_to_string(common::samples_dir().join("captured/vllm-s2.stdout.txt")).unwrap();
    let block_start = log.find("============ Serving").unwrap();
    let mut unreadable = String::new();
    for l in log[block_start..].lines() {
        match l.split_once(':') {
            Some((label, _)) if !l.starts_with('=') && !l.starts_with('-') => {
                unreadable += &format!("{:<40} {:<10}\n", format!("{label}:"), "nan")
            }
            _ => unreadable += &format!("{l}\n"),
        }
    }
    let all_failed = set_row(&set_row(&log, "Successful requests:", "0"), "Failed requests:", "16");
    for (what, text, says) in [
        ("every value nan", unreadable.as_str(), "no usable key figure: missing TPOT"),
        ("every request failed", all_failed.as_str(), "no request succeeded (16 failed)"),
    ] {
        let runs = normalize_str(text, "x").unwrap();
        assert_eq!(runs[0].verdict, Verdict::Unusable, "{what}");
        let c = check_of(&runs[0], "key-figures");
        assert!(c.message.starts_with(says), "{what}: {}", c.message);
        // The executable exits 3 and says which figures are missing.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.log");
        std::fs::write(&file, text).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_bench-normalize")).arg(&file).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{what}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("run 1 unusable: key-figures: "), "{what}: {err}");
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["runs"][0]["verdict"], "unusable");
    }
}

#[test]
fn physical_range() {
    let with = |tpot: f64, ttft: f64| {
        run_of(
            json!({ "successful_requests": 16, "duration_s": 26.74, "output_tokens": 8192 }),
            json!({ "ttft_ms": { "mean": ttft }, "tpot_ms": { "mean": tpot } }),
            json!({}),
        )
    };
    assert_eq!(rule("physical-range", with(12.8, 140.0)).0, Status::Pass);
    // An AIPerf export in seconds read as ms: TPOT 0.0128 ms, 78,125 tok/s per user.
    let (s, m) = rule("physical-range", with(0.0128, 0.14));
    assert_eq!(s, Status::Fail);
    assert!(m.contains("= 78125 tok/s per user, above 20000"), "{m}");
    let (s, m) = rule("physical-range", with(12.8, 0.001));
    assert_eq!(s, Status::Fail);
    assert!(m.contains("reported.ttft_ms.mean = 0.001 ms, below 0.01 ms"), "{m}");
    // A warning: flagged, not rejected.
    assert_eq!(normalize_str(&with(0.0128, 0.14).to_string(), "x.json").unwrap()[0].verdict, Verdict::Accepted);
}
