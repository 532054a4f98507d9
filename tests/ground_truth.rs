//! Derived TPOT against the emulator's true TPOT, for every captured sample with a truth file.

mod common;

use std::path::Path;

use bench_normalize::report::{ItlPer, TpotMethod};

fn check_sample(truth_path: &Path) -> Vec<String> {
    let truth = common::read_json(truth_path);
    let true_tpot = truth["true_tpot_ms"].as_f64().expect("true_tpot_ms");
    let k = truth["tokens_per_chunk"].as_f64();
    let stdout = truth_path.to_string_lossy().replace(".truth.json", ".stdout.txt");
    let runs = common::normalize_file(Path::new(&stdout)).unwrap_or_else(|e| panic!("{stdout}: {e}"));
    let mut failures = Vec::new();
    assert!(!runs.is_empty());
    for run in &runs {
        let name = format!("{} run {}", common::sample_name(Path::new(&stdout)), run.source.block);
        let Some(tpot) = run.derived.tpot_ms.mean else {
            failures.push(format!("{name}: no derived TPOT ({:?})", run.derived.tpot_ms.reason));
            continue;
        };
        let err = (tpot - true_tpot).abs() / true_tpot;
        if err > 0.02 {
            failures.push(format!("{name}: derived TPOT {tpot} vs true {true_tpot} ({:.2}% off)", err * 100.0));
        }
        // Ground truth is ~1% off at most with E2E available; the tool's own rows are 2 decimals.
        if run.derived.tpot_ms.method == Some(TpotMethod::E2eTtftTokens) && err > 0.01 {
            failures.push(format!("{name}: e2e-ttft-tokens TPOT {tpot} is {:.2}% off the truth", err * 100.0));
        }
        let per_user = run.derived.per_user_decode_tok_per_s.unwrap_or(0.0);
        if ((per_user - 1000.0 / true_tpot) / (1000.0 / true_tpot)).abs() > 0.02 {
            failures.push(format!("{name}: per-user decode rate {per_user} vs true {}", 1000.0 / true_tpot));
        }
        // Multi-token chunks: where ITL is per chunk it is ~k x TPOT, and tokens_per_chunk finds k.
        if let (Some(k), Some(ItlPer::Chunk)) = (k, run.source.semantics.itl) {
            let measured = truth["measured_by_emulator"]["mean_tokens_per_decode_chunk"].as_f64().unwrap_or(k);
            match run.derived.tokens_per_chunk {
                Some(tpc) if ((tpc - measured) / measured).abs() <= 0.05 => {}
                other => failures.push(format!("{name}: tokens_per_chunk {other:?} vs emulator's {measured}")),
            }
        }
        if run.verdict != bench_normalize::report::Verdict::Accepted {
            failures.push(format!("{name}: a real, consistent run was rejected: {:?}", run.checks.iter().filter(|c| c.status == bench_normalize::report::Status::Fail).collect::<Vec<_>>()));
        }
    }
    failures
}

#[test]
fn derived_tpot_is_within_2_percent_of_the_truth() {
    let mut truths = common::sample_files("captured", ".truth.json");
    truths.extend(common::sample_files("versions", ".truth.json"));
    assert_eq!(truths.len(), 36, "the captured (21) and versions (15) samples with truth files");
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
    let tpot = run.derived.tpot_ms.mean.unwrap();
    assert!((tpot - 12.8).abs() < 0.05, "{tpot}");
    let rate = run.derived.per_user_decode_tok_per_s.unwrap();
    assert!((rate - 78.125).abs() < 0.5, "{rate}");
}
