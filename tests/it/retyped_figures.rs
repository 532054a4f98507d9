//! Figures retyped by hand in a captured vLLM or SGLang block. Rounded to fewer digits (what a
//! person copying a block into a report does), the run still holds; a total, a count or the
//! duration typed wrong by a factor (a decimal point moved, a digit too many), or a TTFT mean with
//! its decimal point moved, contradicts the block's own rates or percentiles and rejects the run,
//! so no figure derived from it is printed with exit 0.

use crate::common;

use bench_normalize::report::{StatKey, Verdict};
use proptest::prelude::*;
use proptest::sample::Index;

/// The captured vLLM and SGLang console logs.
fn logs() -> Vec<String> {
    let mut v = Vec::new();
    for dir in ["captured", "versions"] {
        for p in common::sample_files(dir, ".stdout.txt") {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with("vllm") && !name.starts_with("vllmrs") || name.starts_with("sglang") {
                v.push(std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    assert!(v.len() >= 10, "{}", v.len());
    v
}

/// The text with the value of the first row whose label starts with `label` replaced by `f` of it.
fn edit(text: &str, label: &str, f: &dyn Fn(f64) -> String) -> Option<String> {
    let mut done = false;
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if done || !l.starts_with(label) {
                return l.to_string();
            }
            let Some((head, value)) = l.split_once(':') else { return l.to_string() };
            let Ok(v) = value.trim().parse::<f64>() else { return l.to_string() };
            done = true;
            format!("{head}: {}", f(v))
        })
        .collect();
    done.then(|| lines.join("\n") + "\n")
}

fn runs(text: &str) -> Vec<bench_normalize::Run> {
    common::run_all(text.as_bytes(), "retyped.txt").unwrap()
}

const TOTALS: &[&str] = &["Benchmark duration (s)", "Total generated tokens", "Successful requests"];
const RATES: &[&str] = &[
    "Benchmark duration (s)",
    "Request throughput (req/s)",
    "Output token throughput (tok/s)",
    "Input token throughput (tok/s)",
    "Total token throughput (tok/s)",
    "Total input tokens",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The duration and the rates retyped with fewer decimals (0 or 1): the rates still follow.
    #[test]
    fn rounded_rates_and_duration_still_hold(which in any::<Index>(), decimals in prop::collection::vec(0usize..2, 6)) {
        let all = logs();
        let mut text = all[which.index(all.len())].clone();
        for (label, d) in RATES.iter().zip(&decimals) {
            if let Some(t) = edit(&text, label, &|v| format!("{v:.*}", *d)) {
                text = t;
            }
        }
        for run in runs(&text) {
            let check = run.checks.iter().find(|c| c.id == "throughput-totals").unwrap();
            prop_assert_ne!(check.status, bench_normalize::report::Status::Fail, "{}\n{}", check.message, text);
        }
    }

    /// A total, a count or the duration off by a factor of 10 (either way): rejected.
    #[test]
    fn a_total_off_by_a_factor_is_rejected(which in any::<Index>(), field in 0usize..3, up in any::<bool>()) {
        let all = logs();
        let text = &all[which.index(all.len())];
        let factor = if up { 10.0 } else { 0.1 };
        let whole = field > 0;
        let Some(edited) = edit(text, TOTALS[field], &|v| {
            let x = v * factor;
            if whole { format!("{}", x.round().max(1.0)) } else { format!("{x:.2}") }
        }) else {
            return Ok(());
        };
        let got = runs(&edited);
        prop_assert!(!got.is_empty());
        prop_assert_eq!(got[0].verdict, Verdict::Rejected, "{}", edited);
    }
}

/// A mean TTFT with its decimal point moved one place right: more than its percentiles and the
/// longest E2E latency its E2E P99 allows permit.
#[test]
fn a_ttft_mean_with_its_decimal_point_moved_is_rejected() {
    let mut tested = 0;
    for text in logs() {
        let Some(edited) = edit(&text, "Mean TTFT (ms)", &|v| format!("{:.2}", v * 10.0)) else { continue };
        let before = runs(&text);
        let got = runs(&edited);
        // The bound needs the longest E2E latency from the E2E percentiles (with the duration
        // alone it is too loose for 16 requests).
        let e2e_p99 = before[0].reported.stat("e2e_ms").and_then(|s| s.get(StatKey::P(99.0)));
        if before[0].verdict != Verdict::Accepted || e2e_p99.is_none() {
            continue;
        }
        tested += 1;
        assert_eq!(got[0].verdict, Verdict::Rejected, "{edited}");
        let check = got[0].checks.iter().find(|c| c.id == "distribution-possible").unwrap();
        assert!(check.message.contains("reported.ttft_ms: mean"), "{}", check.message);
    }
    assert!(tested >= 5, "{tested}");
}

/// The peers' console and CSV exports: the mean output sequence length (which the TPOT is derived
/// from) retyped ten times larger, while its min, max and percentiles stay: rejected, though those
/// other statistics feed no figure of their own.
#[test]
fn a_mean_sequence_length_outside_its_own_min_max_is_rejected() {
    let mut tested = 0;
    for path in common::sample_files("peers", "").into_iter().filter(|p| {
        let n = p.to_string_lossy();
        (n.contains("aiperf") || n.contains("genaiperf")) && (n.ends_with(".txt") || n.ends_with(".csv"))
    }) {
        let text = std::fs::read_to_string(&path).unwrap();
        let before = runs(&text);
        let Some(row) = before[0].rows.iter().find(|r| r.field.as_deref() == Some("totals.output_tokens_per_request"))
        else {
            continue;
        };
        let value = row.value.clone().unwrap();
        let number: f64 = value.replace(',', "").parse().unwrap();
        let bigger = format!("{:.2}", number * 10.0);
        let edited: String = text
            .lines()
            .enumerate()
            .map(|(i, l)| if i + 1 == row.line { l.replacen(&value, &bigger, 1) } else { l.to_string() })
            .collect::<Vec<_>>()
            .join("\n");
        assert_ne!(edited, text, "{}", path.display());
        let got = runs(&edited);
        assert_eq!(got[0].verdict, Verdict::Rejected, "{}", path.display());
        tested += 1;
    }
    assert!(tested >= 4, "{tested}");
}

/// Every captured vLLM and SGLang log with its ITL rows printed as 0.00 (no request had a second
/// chunk): no TPOT is derived from it, whatever its other rows say.
#[test]
fn no_second_chunk_means_no_tpot() {
    let mut tested = 0;
    for text in logs() {
        let Some(mut edited) = edit(&text, "Mean ITL (ms)", &|_| "0.00".into()) else { continue };
        for label in ["Median ITL (ms)", "P99 ITL (ms)", "P95 ITL (ms)", "P90 ITL (ms)"] {
            if let Some(t) = edit(&edited, label, &|_| "0.00".into()) {
                edited = t;
            }
        }
        let got = runs(&edited);
        if got[0].source.semantics.itl != Some(bench_normalize::report::ItlPer::Chunk) {
            continue;
        }
        tested += 1;
        assert_eq!(got[0].derived.tpot_ms.mean, None, "{edited}");
        assert_eq!(got[0].derived.per_user_decode_tok_per_s, None);
    }
    assert!(tested >= 5, "{tested}");
}
