//! Published blocks (samples/public): the figures read agree with the manifest's expected values.

mod common;

use bench_normalize::Run;
use bench_normalize::report::{StatKey::P, Verdict};

/// The figure a manifest key names. The manifest records each row as the tool labels it; the
/// peers' rows land where their meaning puts them: AIPerf's "Inter Token Latency" is a TPOT
/// (reported.tpot_ms), guidellm's "Time per Output Token" includes TTFT
/// (reported.latency_per_output_token_ms), and neither prints a row the manifest calls the other.
fn figure(run: &Run, tool: &str, key: &str) -> Option<f64> {
    match (tool, key) {
        ("aiperf", "mean_itl_ms") => return run.reported.stat("tpot_ms").and_then(|s| s.mean()),
        ("aiperf", "mean_tpot_ms") => return run.reported.stat("itl_ms").and_then(|s| s.mean()),
        ("guidellm", "mean_tpot_ms") => return run.reported.stat("latency_per_output_token_ms").and_then(|s| s.mean()),
        ("guidellm", "mean_itl_ms") => return run.reported.stat("tpot_ms").and_then(|s| s.mean()),
        _ => {}
    }
    match key {
        "completed_requests" => run.totals.number("successful_requests"),
        "duration_s" => run.totals.number("duration_s"),
        "total_input_tokens" => run.totals.number("input_tokens"),
        "total_output_tokens" => run.totals.number("output_tokens"),
        "max_concurrency" => run.workload.number("max_concurrency"),
        "mean_ttft_ms" => run.reported.stat("ttft_ms").and_then(|s| s.mean()),
        "mean_e2e_ms" => run.reported.stat("e2e_ms").and_then(|s| s.mean()),
        "mean_tpot_ms" => run.reported.stat("tpot_ms").and_then(|s| s.mean()),
        "mean_itl_ms" => run.reported.stat("itl_ms").and_then(|s| s.mean()),
        "accept_length" => run.reported.number("accept_length"),
        other => panic!("unknown manifest key {other}"),
    }
}

#[test]
fn published_blocks_read_as_the_manifest_says() {
    let manifest = common::read_json(&common::samples_dir().join("public/manifest.json"));
    let mut checked = 0;
    let mut failures = Vec::new();
    for entry in manifest.as_array().unwrap() {
        let file = entry["file"].as_str().unwrap();
        let tool = entry["tool"].as_str().unwrap();
        if !["vllm", "sglang", "aiperf", "guidellm", "genai-perf"].contains(&tool) {
            continue;
        }
        let runs = common::normalize_file(&common::samples_dir().join("public").join(file)).unwrap();
        assert_eq!(runs.len() as u64, entry["blocks"].as_u64().unwrap(), "{file}: number of runs");
        for (key, want) in entry["expected"].as_object().unwrap() {
            let got = figure(&runs[0], tool, key);
            // A few values are recorded as printed, with thousands separators ("3,651.23").
            let want = want.as_f64().or_else(|| want.as_str().and_then(|s| s.replace(',', "").parse().ok()));
            if got != want {
                failures.push(format!("{file}: {key} = {got:?}, manifest says {want:?}"));
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_image_generation_block_is_not_read_as_an_llm_run() {
    let runs = common::normalize_file(&common::samples_dir().join("public/004-other.txt")).unwrap();
    let run = &runs[0];
    assert_eq!(run.source.parser, "sglang-multimodal-gen");
    assert_eq!(run.totals.number("successful_requests"), Some(1.0));
    assert_eq!(run.totals.number("sent_requests"), Some(1.0));
    assert_eq!(run.reported.stat("e2e_ms").unwrap().mean(), Some(50968.1));
    assert!(run.reported.get("ttft_ms").is_none() && run.derived.tpot_ms.mean.is_none());
}

/// The early genai-perf table (latencies in ns, thousands separators, lower-case labels): its
/// per-response ITL is kept as ITL and the TPOT comes from E2E, TTFT and the mean output tokens,
/// computed here from the printed figures.
#[test]
fn early_genai_perf_table_in_nanoseconds() {
    let runs = common::normalize_file(&common::samples_dir().join("public/101-genai-perf.txt")).unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.source.parser, "genai-perf-console-early");
    assert_eq!(run.source.semantics.itl, Some(bench_normalize::report::ItlPer::Chunk));
    assert_eq!(run.reported.stat("itl_ms").and_then(|s| s.get(bench_normalize::report::StatKey::Min)), Some(0.042023));
    assert!(run.reported.get("tpot_ms").is_none(), "the per-response ITL is never a TPOT");
    let want = (223_532_625.0 - 13_266_974.0) / 1e6 / (104.0 - 1.0);
    let got = run.derived.tpot_ms.mean.unwrap();
    assert!((got - want).abs() < 1e-4, "{got} vs {want}");
    assert_eq!(run.derived.tpot_ms.method, Some(bench_normalize::report::TpotMethod::E2eTtftTokens));
    assert_eq!(run.verdict, bench_normalize::report::Verdict::Accepted);
}

/// vLLM's 2023 paragraph output as pasted in issues (several runs, free-text headings between
/// them): one run per paragraph, each with its own figures; no TPOT, and why.
#[test]
fn vllm_2023_paragraphs_are_one_run_each() {
    for (file, durations, e2e_s) in [
        ("public/102-vllm.txt", [98.36, 148.03, 157.14], [47.96, 62.97, 71.33]),
        ("public/103-vllm.txt", [670.81, 777.56, 774.99], [281.92, 334.56, 334.06]),
    ] {
        let runs = common::normalize_file(&common::samples_dir().join(file)).unwrap();
        assert_eq!(runs.len(), 3, "{file}");
        for (i, run) in runs.iter().enumerate() {
            assert_eq!(run.source.parser, "vllm-benchmark-serving-v0.1", "{file}");
            assert_eq!(run.totals.number("duration_s"), Some(durations[i]), "{file} run {i}");
            let e2e = run.reported.stat("e2e_ms").and_then(|s| s.mean()).unwrap();
            assert!((e2e - e2e_s[i] * 1000.0).abs() < 1e-6, "{file} run {i}: {e2e}");
            assert!(run.derived.tpot_ms.mean.is_none() && run.derived.tpot_ms.reason.is_some(), "{file} run {i}");
            assert_eq!(run.verdict, bench_normalize::report::Verdict::Accepted, "{file} run {i}");
        }
    }
}

/// The lower-case ms layout of the same table: its inter-token latency is a time per token (per
/// response over its tokens, or per request), kept as ITL per token; TPOT from E2E, TTFT and the
/// mean output length, computed here from the printed figures.
#[test]
fn genai_perf_lower_case_ms_table() {
    let runs = common::normalize_file(&common::samples_dir().join("public/104-genai-perf.txt")).unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.source.variant.as_deref(), Some("lower-case-ms"));
    assert_eq!(run.source.semantics.itl, Some(bench_normalize::report::ItlPer::Token));
    let want = (161.24 - 11.70) / (103.39 - 1.0);
    let got = run.derived.tpot_ms.mean.unwrap();
    assert!((got - want).abs() < 1e-4, "{got} vs {want}");
    assert_eq!(run.verdict, bench_normalize::report::Verdict::Accepted);
}

/// guidellm's published example 044 draws each group header over 5 columns, over 6 sub-columns
/// each: every percentile must still land under its own metric (values as the paste prints them).
#[test]
fn a_hand_edited_grouped_header_keeps_each_percentile_under_its_metric() {
    let runs = common::normalize_file(&common::samples_dir().join("public/044-guidellm.txt")).unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    let stat = |name: &str| run.reported.stat(name).unwrap_or_else(|| panic!("{name} not read"));
    let (ttft, e2e, lpot) = (stat("ttft_ms"), stat("e2e_ms"), stat("latency_per_output_token_ms"));
    for (got, want) in [
        (ttft.get(P(90.0)), 30.2),
        (ttft.get(P(95.0)), 32.5),
        (ttft.get(P(99.0)), 35.1),
        (e2e.get(P(99.0)), 160.5),
        (lpot.get(P(90.0)), 23.7),
        (lpot.get(P(99.0)), 24.8),
    ] {
        assert_eq!(got, Some(want));
    }
    assert!(run.notes.iter().any(|n| n.code == "table-header-repaired"));
    assert_eq!(run.verdict, Verdict::Accepted);
}
