//! Derived TPOT against the emulator's true TPOT, for every captured sample with a truth file.

use crate::common;

use std::path::Path;

use bench_normalize::Run;
use bench_normalize::report::{ItlPer, StatKey, TpotMethod};
use serde_json::Value;

/// What the emulator measured server-side for this run (its realized TPOT and tokens per chunk),
/// in whichever of the truth files' three shapes: one run, one entry per sweep step, or one per
/// concurrency.
fn measured<'t>(truth: &'t Value, run: &Run) -> Option<&'t Value> {
    let one = &truth["measured_by_emulator"];
    let step = &truth["measured_by_emulator_per_step"][run.source.block.saturating_sub(1)]["measured_by_emulator"];
    let by_concurrency =
        run.workload.number("max_concurrency").map(|c| &truth["measured_by_emulator_per_concurrency"][format!("{c}")]);
    [Some(one), Some(step), by_concurrency].into_iter().flatten().find(|v| v.is_object())
}

fn check_sample(truth_path: &Path) -> Vec<String> {
    let truth = common::read_json(truth_path);
    let stdout = truth_path.to_string_lossy().replace(".truth.json", ".stdout.txt");
    let runs = common::normalize_file(Path::new(&stdout)).unwrap_or_else(|e| panic!("{stdout}: {e}"));
    let mut failures = Vec::new();
    assert!(!runs.is_empty());
    // A vllm-rs sweep summary repeats each step's P50 TPOT, one run per line in step order: it is
    // held to the step's measured TPOT (the emulator decodes at a steady rate, so its median is
    // its mean).
    let summary: Vec<&Run> = runs.iter().filter(|r| r.source.parser == "vllm-rs-sweep-summary").collect();
    for (step, run) in summary.iter().enumerate() {
        let name = format!("{} summary line {}", common::sample_name(Path::new(&stdout)), step + 1);
        let measured = truth["measured_by_emulator_per_step"][step]["measured_by_emulator"]["mean_tpot_ms"]
            .as_f64()
            .expect("a measured TPOT per step");
        match run.reported.stat("tpot_ms").and_then(|s| s.get(StatKey::P(50.0))) {
            Some(p50) if common::is_truth(p50, measured, true) => {}
            other => failures.push(format!("{name}: P50 TPOT {other:?} vs the step's measured {measured}")),
        }
        if run.derived.tpot_ms.mean.is_some() {
            failures.push(format!("{name}: a TPOT was derived from a line with no E2E latency or token counts"));
        }
    }
    for run in runs.iter().filter(|r| r.source.parser != "vllm-rs-sweep-summary") {
        let name = format!("{} run {}", common::sample_name(Path::new(&stdout)), run.source.block);
        let Some(tpot) = run.derived.tpot_ms.mean else {
            failures.push(format!("{name}: no derived TPOT ({:?})", run.derived.tpot_ms.reason));
            continue;
        };
        // The TPOT the emulator realized in this run; the one it was configured with when the
        // truth file has no measurement.
        let m = measured(&truth, run);
        let true_tpot = m
            .and_then(|m| m["mean_tpot_ms"].as_f64())
            .unwrap_or_else(|| truth["true_tpot_ms"].as_f64().expect("true_tpot_ms"));
        let printed = run.derived.tpot_ms.method == Some(TpotMethod::ToolTpot);
        if !common::is_truth(tpot, true_tpot, printed) {
            failures.push(format!(
                "{name}: derived TPOT {tpot} ({:?}) vs true {true_tpot} ({:.3}% off)",
                run.derived.tpot_ms.method,
                (tpot - true_tpot) / true_tpot * 100.0
            ));
        }
        // The per-user decode rate is the TPOT's reciprocal (both kept to six significant digits).
        let per_user = run.derived.per_user_decode_tok_per_s.unwrap_or(0.0);
        if (per_user * tpot / 1000.0 - 1.0).abs() > 1e-5 {
            failures.push(format!("{name}: per-user decode rate {per_user} is not 1000 / {tpot}"));
        }
        // Multi-token chunks: where ITL is per chunk it is ~k x TPOT, and tokens_per_chunk finds k.
        if let (Some(_), Some(ItlPer::Chunk)) = (truth["tokens_per_chunk"].as_f64(), run.source.semantics.itl) {
            let want = m.and_then(|m| m["mean_tokens_per_decode_chunk"].as_f64()).expect("a measured tokens per chunk");
            match run.derived.tokens_per_chunk {
                Some(tpc) if common::is_truth(tpc, want, false) => {}
                other => failures.push(format!("{name}: tokens_per_chunk {other:?} vs emulator's {want}")),
            }
        }
        if run.verdict != bench_normalize::report::Verdict::Accepted {
            failures.push(format!(
                "{name}: a real, consistent run was rejected: {:?}",
                run.checks.iter().filter(|c| c.status == bench_normalize::report::Status::Fail).collect::<Vec<_>>()
            ));
        }
    }
    failures
}

#[test]
fn derived_tpot_is_the_truth() {
    let mut truths = common::sample_files("captured", ".truth.json");
    truths.extend(common::sample_files("versions", ".truth.json"));
    assert_eq!(truths.len(), 38, "the captured (21) and versions (17) samples with truth files");
    let failures: Vec<String> = truths.iter().flat_map(|t| check_sample(t)).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_motivating_case_prints_a_per_chunk_itl_ten_times_the_true_tpot() {
    // SGLang 0.5.5.post1 prints no TPOT row; its only decode figure is ITL 125.80 ms per chunk.
    let path = common::samples_dir().join("versions/sglang0.5.5.post1-oai-s2.stdout.txt");
    let runs = common::normalize_file(&path).unwrap();
    let run = &runs[0];
    assert!(run.reported.get("tpot_ms").is_none(), "this version prints no TPOT row");
    assert_eq!(run.reported.stat("itl_ms").unwrap().mean(), Some(125.80));
    assert_eq!(run.reported.text("itl_per"), Some("chunk"));
    assert_eq!(run.derived.tpot_ms.method, Some(TpotMethod::E2eTtftTokens));
    let truth = common::read_json(&common::samples_dir().join("versions/sglang0.5.5.post1-oai-s2.truth.json"));
    let tpot = run.derived.tpot_ms.mean.unwrap();
    assert!(common::is_truth(tpot, truth["true_tpot_ms"].as_f64().unwrap(), false), "{tpot}");
    let rate = run.derived.per_user_decode_tok_per_s.unwrap();
    assert!(common::is_truth(rate, truth["true_output_tok_per_s_per_user"].as_f64().unwrap(), false), "{rate}");
    // What hand-copying the ITL row would have published: ~10x too slow.
    let copied = 1000.0 / run.reported.stat("itl_ms").unwrap().mean().unwrap();
    assert!(rate / copied > 9.0, "{rate} vs {copied}");
}
