//! Samples rendered from the tools' format strings (samples/rendered, see its README): every variant
//! the captures lack is read as that variant, and the derived TPOT matches the simulated truth.

use crate::common;

use bench_normalize::report::{StatKey, TpotMethod, Verdict};

fn runs(file: &str) -> Vec<bench_normalize::Run> {
    common::normalize_file(&common::samples_dir().join("rendered").join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn each_rendered_variant_is_recognized() {
    let want = [
        ("vllm-script-0.1.txt", "vllm-benchmark-serving-v0.1", "script-0.1"),
        ("vllm-script-0.4-0.5.txt", "vllm-bench-serve", "script-0.4-0.5"),
        ("vllm-script-0.6.1-0.6.2.txt", "vllm-bench-serve", "script-0.6.1-0.6.2"),
        ("vllm-0.8-0.10.0-goodput.txt", "vllm-bench-serve", "0.8-0.10.2"),
        ("vllm-0.11.0.txt", "vllm-bench-serve", "0.11.0"),
        ("vllm-0.17-rtfx.txt", "vllm-bench-serve", "0.13+"),
        ("vllm-0.24-diffusion.txt", "vllm-bench-serve", "0.13+"),
        ("vllm-0.29-pooling.txt", "vllm-bench-serve", "0.13+"),
        ("vllm-0.30-all-sections.txt", "vllm-bench-serve", "0.13+"),
        ("sglang-0.1.22.txt", "sglang-bench-serving", "0.1.22"),
        ("sglang-0.1.24-0.3.5.txt", "sglang-bench-serving", "0.1.24-0.3.5"),
        ("sglang-0.3.5.post2-0.3.6.txt", "sglang-bench-serving", "0.3.5.post2-0.3.6"),
        ("sglang-0.3.6.post3-0.4.1.post7.txt", "sglang-bench-serving", "0.3.6.post3-0.4.1.post7"),
        ("sglang-0.4.2-0.4.3.post2.txt", "sglang-bench-serving", "0.4.2-0.4.3.post2"),
        ("sglang-0.4.6.post4-0.5.3.txt", "sglang-bench-serving", "0.4.6.post4-0.5.3"),
        ("sglang-0.5.10-embedding.txt", "sglang-bench-serving", "0.5.8-0.5.13"),
        ("sglang-0.5.23-goodput-cache.txt", "sglang-bench-serving", "0.5.23"),
        ("sglang-multi-0.4.1.txt", "sglang-bench-serving", "0.3.6.post3-0.4.1.post7"),
    ];
    assert_eq!(
        common::sample_files("rendered", ".txt").len(),
        want.len(),
        "a rendered sample without an expectation here"
    );
    for (file, parser, variant) in want {
        for run in runs(file) {
            assert_eq!((run.source.parser.as_str(), run.source.variant.as_deref()), (parser, Some(variant)), "{file}");
            assert_eq!(run.verdict, Verdict::Accepted, "{file}: {:?}", run.checks);
            assert!(!run.notes.iter().any(|n| n.code == "ambiguous-tool"), "{file}");
        }
    }
}

#[test]
fn derived_tpot_matches_the_simulated_truth() {
    let expected = common::read_json(&common::samples_dir().join("rendered/expected.json"));
    let mut checked = 0;
    for (file, e) in expected.as_object().unwrap() {
        // vLLM 0.1.x prints no token counts and no TTFT: its decode time cannot be derived.
        let underivable = file == "vllm-script-0.1.txt";
        let truths: Vec<f64> = match &e["true_tpot_ms"] {
            serde_json::Value::Array(a) if !underivable => a.iter().map(|v| v.as_f64().unwrap()).collect(),
            serde_json::Value::Number(n) if !underivable => vec![n.as_f64().unwrap()],
            _ => {
                // No decode (pooling, embedding) or no counts (0.1 script): TPOT stays null.
                for run in runs(file) {
                    assert!(run.derived.tpot_ms.mean.is_none(), "{file}");
                    assert!(run.derived.tpot_ms.reason.is_some(), "{file}");
                }
                continue;
            }
        };
        let got = runs(file);
        assert_eq!(got.len(), truths.len(), "{file}");
        for (run, truth) in got.iter().zip(truths) {
            let tpot = run.derived.tpot_ms.mean.unwrap_or_else(|| panic!("{file}: {:?}", run.derived.tpot_ms.reason));
            // A TPOT the tool printed is its own figure (to 2 decimals), which can stand apart from
            // the truth: a diffusion canvas streams 32 tokens in its first chunk, so `n - 1` counts
            // tokens that came with it as decoded and reads low (the documented first-chunk limit);
            // an ASR run's latency ends at the usage-only chunk.
            let printed = run.derived.tpot_ms.method == Some(TpotMethod::ToolTpot);
            let want = if printed { e["tool_tpot_ms"].as_f64().unwrap() } else { truth };
            assert!(common::is_truth(tpot, want, printed), "{file}: derived {tpot} vs {want}");
            checked += 1;
        }
    }
    assert_eq!(checked, 18);
}

#[test]
fn the_e2el_mean_median_swap_of_script_0_6_is_corrected_and_flagged() {
    let run = runs("vllm-script-0.6.1-0.6.2.txt").remove(0);
    let e2e = run.reported.stat("e2e_ms").unwrap();
    // Printed: `Mean E2EL (ms): 6609.36` (the median), `Median E2EL (ms): 6868.56` (the mean).
    assert_eq!((e2e.mean(), e2e.get(StatKey::P(50.0))), (Some(6868.56), Some(6609.36)));
    assert!(run.notes.iter().any(|n| n.code == "corrected-swap"));
    assert_eq!(run.derived.tpot_ms.method, Some(TpotMethod::E2eTtftTokens));
    // The rows keep what was printed.
    let mean_row = run.rows.iter().find(|r| r.label == "Mean E2EL (ms)").unwrap();
    assert_eq!(mean_row.value.as_deref(), Some("6609.36"));
    // Without the lines before the banner the two layouts look alike: no correction, a note.
    let text = std::fs::read_to_string(common::samples_dir().join("rendered/vllm-script-0.6.1-0.6.2.txt")).unwrap();
    let block = &text[text.find("============ Serving").unwrap()..];
    let bare = bench_normalize::normalize_str(block, "pasted").unwrap().remove(0);
    assert_eq!(bare.source.variant.as_deref(), Some("0.6.1-0.10.2"));
    assert_eq!(bare.reported.stat("e2e_ms").unwrap().mean(), Some(6609.36));
    assert!(bare.notes.iter().any(|n| n.code == "variant-0.6.1-0.10.2" && n.message.contains("swapped")));
}

#[test]
fn duplicate_cache_labels_and_goodput_keep_both_values() {
    let run = runs("sglang-0.5.23-goodput-cache.txt").remove(0);
    let cache = |k: &str| run.reported.number(&format!("cache.{k}"));
    assert!(cache("device_cached_tokens").is_some() && cache("device_hit_rate_pct").is_some());
    assert!(cache("host_cached_tokens").is_some() && cache("host_hit_rate_pct").is_some());
    assert_ne!(cache("device_cached_tokens"), cache("device_hit_rate_pct"));
    assert!(run.workload.text("goodput_slos").is_some());
    assert!(run.reported.number("goodput.slo_attainment_pct").is_some());
    // The native backend splits ITL per token.
    assert_eq!(run.reported.text("itl_per"), Some("token"));
}

#[test]
fn multi_rate_runs_are_three_runs_with_their_rates() {
    let rates: Vec<Option<f64>> =
        runs("sglang-multi-0.4.1.txt").iter().map(|r| r.workload.number("request_rate")).collect();
    assert_eq!(rates, [Some(2.0), Some(4.0), Some(6.0)]);
}

#[test]
fn llmperf_inter_token_latency_includes_ttft_and_is_never_a_tpot() {
    let run = runs("llmperf-summary.json").remove(0);
    assert_eq!((run.source.parser.as_str(), run.source.variant.as_deref()), ("llmperf-summary", Some("2024")));
    // llmperf's "inter-token latency" is E2E / N: kept, apart, never as TPOT.
    assert!(run.reported.get("tpot_ms").is_none());
    assert_eq!(run.reported.stat("latency_per_output_token_ms").unwrap().mean(), Some(20.7031));
    let row = run.rows.iter().find(|r| r.label == "results_inter_token_latency_s_mean").unwrap();
    assert_eq!(row.field.as_deref(), Some("reported.latency_per_output_token_ms.mean"));
    // TPOT from E2E, TTFT and the mean output length: (5300 - 200) / (256 - 1) = 20 ms.
    assert_eq!(run.derived.tpot_ms.method, Some(TpotMethod::E2eTtftTokens));
    assert_eq!(run.derived.per_user_decode_tok_per_s, Some(50.0));
}
