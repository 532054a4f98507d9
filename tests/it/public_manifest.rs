//! Published blocks (samples/public): the figures read agree with the manifest's expected values.

use crate::common;

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
        if !["vllm", "sglang", "aiperf", "guidellm", "genai-perf", "evalscope", "trtllm", "lmdeploy", "lightllm"]
            .contains(&tool)
        {
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

/// vLLM 0.3.x's summary lines (no banner) and JetStream's copy of them: one run per duration line,
/// the success count printed before it read too; their "TPOT" rows are kept as rows feeding no
/// figure (latency / output tokens in vLLM 0.3.x, TTFT included), and no TPOT is derived, with the
/// reason said. The figures are the ones the pastes print.
#[test]
fn vllm_0_3_summary_lines_are_runs_whose_tpot_rows_are_not_read() {
    for (file, requests, durations, ttfts, tpot_rows) in [
        (
            "public/105-vllm.txt",
            47.0,
            vec![134.27568, 128.04496, 126.786682, 120.244815],
            vec![71036.62, 71340.69, 71280.88, 58228.22],
            vec!["667.68 ms", "679.42 ms", "674.62 ms", "567.64 ms"],
        ),
        (
            "public/108-vllm.txt",
            1780.0,
            vec![294.101467, 29.060651],
            vec![114960.78, 1274.09],
            vec!["4429.77 ms", "58.04 ms"],
        ),
    ] {
        let runs = common::normalize_file(&common::samples_dir().join(file)).unwrap();
        assert_eq!(runs.len(), durations.len(), "{file}");
        assert_eq!(runs[0].totals.number("successful_requests"), Some(requests), "{file}");
        for (i, run) in runs.iter().enumerate() {
            assert_eq!(run.source.parser, "vllm-benchmark-serving-v0.3", "{file} run {i}");
            assert_eq!(run.source.variant.as_deref(), Some("script-0.3"), "{file} run {i}");
            assert_eq!(run.totals.number("duration_s"), Some(durations[i]), "{file} run {i}");
            assert_eq!(run.reported.stat("ttft_ms").and_then(|s| s.mean()), Some(ttfts[i]), "{file} run {i}");
            let row = run.rows.iter().find(|r| r.label == "Mean TPOT").expect("the TPOT row is kept");
            assert_eq!(row.value.as_deref(), Some(tpot_rows[i]), "{file} run {i}");
            assert!(row.field.is_none(), "{file} run {i}: the 0.3.x TPOT row feeds no figure");
            assert!(run.reported.get("tpot_ms").is_none(), "{file} run {i}");
            assert!(run.derived.tpot_ms.mean.is_none() && run.derived.tpot_ms.reason.is_some(), "{file} run {i}");
            assert!(run.notes.iter().any(|n| n.code == "parser-note"), "{file} run {i}");
            assert_eq!(run.verdict, bench_normalize::report::Verdict::Accepted, "{file} run {i}");
        }
    }
}

/// A newer vLLM block retyped by hand into the 0.3.x shape (units moved after the values, rows
/// 0.3.x never printed: published in a MetaX C500 deployment guide) is read by label as no known
/// variant, never attributed to vLLM 0.3.x; its TPOT rows feed nothing there either.
#[test]
fn a_retyped_newer_block_is_not_called_vllm_0_3() {
    let text = "Successful requests:                  40\nFailed requests:                       0\n\
Benchmark duration:                21.22 s\nRequest throughput:                 1.89 req/s\n\
Output token throughput:          120.66 token/s\nPeak output token throughput:     128.00 token/s\n\
Total token throughput:           381.73 token/s\nMean TTFT:                          96.97 ms\n\
P99 TTFT:                          120.50 ms\nMean TPOT:                          32.12 ms/token\n\
P99 TPOT:                           32.62 ms/token\nMean ITL:                           31.62 ms\n\
P99 ITL:                            33.21 ms\n";
    let runs = common::run_all(text.as_bytes(), "retyped.txt").unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.source.parser, "vllm-benchmark-serving-v0.3");
    assert_eq!(run.source.variant, None);
    assert_eq!(run.totals.number("duration_s"), Some(21.22));
    assert_eq!(run.reported.stat("ttft_ms").and_then(|s| s.mean()), Some(96.97));
    assert!(run.reported.get("tpot_ms").is_none() && run.derived.tpot_ms.mean.is_none());
}

/// genai-perf's lower-case table under the "NVIDIA GenAI-Perf | LLM Metrics" title, with the
/// throughput and goodput rows inside the table: read by the lower-case definition (its inter
/// token latency a time per token), the rows in the avg column, TPOT derived from the printed
/// E2E, TTFT and mean output length.
#[test]
fn genai_perf_lower_case_table_under_the_nvidia_title() {
    let runs = common::normalize_file(&common::samples_dir().join("public/106-genai-perf.txt")).unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.source.parser, "genai-perf-console-early");
    assert_eq!(run.source.variant.as_deref(), Some("lower-case-ms"));
    assert_eq!(run.source.semantics.itl, Some(bench_normalize::report::ItlPer::Token));
    assert_eq!(run.reported.number("request_per_s"), Some(0.15));
    assert_eq!(run.reported.number("output_tok_per_s"), Some(51.2));
    assert_eq!(run.reported.number("request_goodput_per_s"), Some(0.12));
    let want = (6740.76 - 78.10) / (345.80 - 1.0);
    let got = run.derived.tpot_ms.mean.unwrap();
    assert!((got - want).abs() < 1e-4, "{got} vs {want}");
    assert_eq!(run.verdict, bench_normalize::report::Verdict::Accepted);
}

/// Two guidellm 0.2 sweeps, the first with its table titles printed without a colon: all twenty
/// steps are runs; a step with no completed request (the second sweep's first row, and the last
/// three rate steps of each) is a run with nothing usable, never zero latencies accepted.
#[test]
fn guidellm_sweeps_with_colonless_titles_and_empty_steps() {
    let runs = common::normalize_file(&common::samples_dir().join("public/107-guidellm.txt")).unwrap();
    assert_eq!(runs.len(), 20);
    let empty: Vec<usize> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.totals.number("successful_requests") == Some(0.0))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(empty, vec![7, 8, 9, 10, 17, 18, 19]);
    for (i, run) in runs.iter().enumerate() {
        let want = if empty.contains(&i) {
            bench_normalize::report::Verdict::Unusable
        } else {
            bench_normalize::report::Verdict::Accepted
        };
        assert_eq!(run.verdict, want, "run {i}");
    }
    assert_eq!(runs[0].workload.text("strategy"), Some("synchronous"));
    assert_eq!(runs[0].reported.stat("ttft_ms").and_then(|s| s.mean()), Some(289.2));
    assert_eq!(runs[11].totals.number("successful_requests"), Some(220.0));
}

/// Log lines of other processes, for between the runs of a paste.
const NOISE: &[&str] = &[
    "INFO 02-27 10:12:01 metrics.py:161] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 312.4 tokens/s",
    "100%|██████████| 50/50 [02:14<00:00,  2.69s/it]",
    "Namespace(backend='vllm', version='N/A', base_url=None, host='localhost', port=8000, endpoint='/generate')",
    "Traffic request rate: inf",
    "",
];

/// The vLLM 0.3.x summary lines read to the same runs whatever surrounds and pads them: any gap
/// after a label's colon, CRLF line endings, one line prefix on every line (a comment marker, an
/// indent, a Markdown quote), and other processes' log lines before each run and after it.
fn vary(text: &str, gap: usize, crlf: bool, prefix: &str, noise: &[usize]) -> String {
    let mut out = String::new();
    let mut n = noise.iter().cycle();
    let eol = if crlf { "\r\n" } else { "\n" };
    for line in text.lines() {
        let before = line.starts_with("Successful requests:");
        if before {
            out.push_str(&format!("{prefix}{}{eol}", NOISE[*n.next().unwrap() % NOISE.len()]));
        }
        let line = match line.split_once(": ") {
            Some((label, value)) if !label.contains('`') && !label.starts_with('#') => {
                format!("{label}:{}{value}", " ".repeat(gap))
            }
            _ => line.to_string(),
        };
        out.push_str(&format!("{prefix}{line}{eol}"));
        if line.starts_with("P99 TPOT:") {
            out.push_str(&format!("{prefix}{}{eol}", NOISE[*n.next().unwrap() % NOISE.len()]));
        }
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    #[test]
    fn vllm_0_3_lines_read_the_same_padded_prefixed_and_among_noise(
        file in proptest::sample::select(vec!["public/105-vllm.txt", "public/108-vllm.txt"]),
        gap in 1usize..24,
        crlf in proptest::bool::ANY,
        prefix in proptest::sample::select(vec!["", "# ", "    ", "> ", "    # "]),
        noise in proptest::collection::vec(0usize..16, 1..8),
    ) {
        let clean = std::fs::read_to_string(common::samples_dir().join(file)).unwrap();
        let want: Vec<serde_json::Value> =
            common::run_all(clean.as_bytes(), "clean.txt").unwrap().iter().map(common::figures_of).collect();
        let varied = vary(&clean, gap, crlf, prefix, &noise);
        let got: Vec<serde_json::Value> =
            common::run_all(varied.as_bytes(), "varied.txt").unwrap().iter().map(common::figures_of).collect();
        proptest::prop_assert_eq!(got, want, "{}", varied);
    }
}

/// genai-perf's title-cased table under "NVIDIA GenAI-Perf | Multi-Modal Metrics" (its title with
/// `--endpoint-type multimodal`): two runs, read as the LLM table is, its Inter Token Latency a
/// per-request TPOT.
#[test]
fn genai_perf_multi_modal_metrics_table() {
    let runs = common::normalize_file(&common::samples_dir().join("public/112-genai-perf.txt")).unwrap();
    assert_eq!(runs.len(), 2);
    for (run, requests, ttft, tpot) in [(&runs[0], 97.0, 205.38, 16.41), (&runs[1], 101.0, 284.94, 9.56)] {
        assert_eq!(run.source.parser, "genai-perf-console");
        assert_eq!(run.totals.number("successful_requests"), Some(requests));
        assert_eq!(run.reported.stat("ttft_ms").and_then(|s| s.mean()), Some(ttft));
        assert_eq!(run.reported.stat("tpot_ms").and_then(|s| s.mean()), Some(tpot));
        assert!(run.reported.get("itl_ms").is_none());
        assert_eq!(run.verdict, bench_normalize::report::Verdict::Accepted);
    }
}

/// A published SGLang run whose output came in one streamed chunk per request (mean ITL 0.00,
/// TTFT within 1% of E2E): E2E - TTFT is not a decode time, so no TPOT and no per-user rate are
/// given, with the reason; its measured latencies stay.
#[test]
fn a_run_without_a_second_chunk_has_no_tpot() {
    let runs = common::normalize_file(&common::samples_dir().join("public/109-sglang.txt")).unwrap();
    let run = &runs[0];
    assert_eq!(run.derived.tpot_ms.mean, None);
    assert!(run.derived.tpot_ms.reason.as_deref().unwrap().contains("one streamed chunk"));
    assert_eq!(run.derived.per_user_decode_tok_per_s, None);
    assert_eq!(run.reported.stat("ttft_ms").and_then(|s| s.mean()), Some(2074.09));
}
