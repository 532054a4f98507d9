//! Peers' exports (samples/peers: NVIDIA AIPerf and guidellm against the same emulated server):
//! each tool's rows mean one thing in the canonical report.

mod common;

use bench_normalize::Run;
use bench_normalize::report::{Status, TpotMethod};

fn one(file: &str) -> Run {
    let mut runs = common::normalize_file(&common::samples_dir().join("peers").join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(runs.len(), 1);
    runs.remove(0)
}

fn truth(file: &str) -> f64 {
    common::read_json(&common::samples_dir().join("peers").join(file))["true_tpot_ms"].as_f64().unwrap()
}

fn row_field<'a>(run: &'a Run, key: &str) -> Option<&'a str> {
    run.rows.iter().find(|r| r.label == key).and_then(|r| r.field.as_deref())
}

#[test]
fn aiperf_inter_token_latency_is_a_tpot_and_its_chunk_latency_is_the_itl() {
    let run = one("aiperf-s2.profile_export_aiperf.json");
    assert_eq!(run.source.parser, "aiperf-profile-export");
    assert_eq!(row_field(&run, "inter_token_latency.avg"), Some("reported.tpot_ms.mean"));
    assert_eq!(row_field(&run, "inter_chunk_latency.avg"), Some("reported.itl_ms.mean"));
    let t = truth("aiperf-s2.truth.json");
    let d = run.derived.tpot_ms.mean.unwrap();
    assert!(common::is_truth(d, t, false), "{d} vs {t}");
    assert_eq!(run.derived.tpot_ms.method, Some(TpotMethod::E2eTtftTokens));
    // Its TPOT agrees with the derivation; its chunk latency is ~10 tokens per chunk.
    assert!(run.checks.iter().any(|c| c.id == "tpot-agreement" && c.status == Status::Pass));
    assert!((run.derived.tokens_per_chunk.unwrap() - 9.83).abs() < 0.1);
    assert_eq!(run.workload.number("max_concurrency"), Some(4.0));
}

#[test]
fn guidellm_itl_is_a_tpot_and_its_tpot_includes_ttft() {
    let run = one("guidellm-s2.benchmarks.json");
    assert_eq!(run.source.parser, "guidellm-benchmarks");
    assert_eq!(row_field(&run, "metrics.inter_token_latency_ms.successful.mean"), Some("reported.tpot_ms.mean"));
    assert_eq!(row_field(&run, "metrics.time_per_output_token_ms.successful.mean"), Some("reported.latency_per_output_token_ms.mean"));
    let t = truth("guidellm-s2.truth.json");
    let d = run.derived.tpot_ms.mean.unwrap();
    assert!(common::is_truth(d, t, false), "{d} vs {t}");
    // guidellm's own "TPOT" (13.05 ms) includes TTFT: it is kept, apart, and not what is derived.
    let l = run.reported.stat("latency_per_output_token_ms").unwrap().mean().unwrap();
    assert!((l - 13.05).abs() < 0.01, "{l}");
    assert_eq!(run.reported.number("tokens_per_chunk").map(|x| (x * 100.0).round() / 100.0), Some(9.83));
    assert!(run.checks.iter().all(|c| c.status != Status::Fail), "{:?}", run.checks);
}

#[test]
fn guidellm_counting_chunks_as_tokens_is_said() {
    // No usage from the server, no requested length in the data: 53 "tokens" per request.
    let run = one("guidellm-s2nousagemaxtok.benchmarks.json");
    assert_eq!(run.totals.number("output_tokens"), Some(848.0));
    let check = run.checks.iter().find(|c| c.id == "token-count-source").unwrap();
    assert_eq!(check.status, Status::Fail);
    assert!(check.message.starts_with("53 tokens per request counted at 1 per streamed chunk where 512 were asked"), "{}", check.message);
}
