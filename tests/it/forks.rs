//! Copies of the vLLM and SGLang clients kept in other serving projects (docs/formats.md,
//! "Forks of the vLLM and SGLang clients"): each is reported as its own tool when its block shows
//! it, read with the meanings its own source gives, and left as upstream's where it prints
//! upstream's block byte for byte.

use crate::common;

use bench_normalize::Run;
use bench_normalize::report::{ItlPer, StatKey, Verdict};

fn public(file: &str) -> Vec<Run> {
    common::normalize_file(&common::samples_dir().join("public").join(file)).unwrap()
}

fn row<'r>(run: &'r Run, label: &str) -> &'r bench_normalize::report::Row {
    run.rows.iter().find(|r| r.label == label).unwrap_or_else(|| panic!("no row {label}"))
}

/// TensorRT-LLM's published example (its docs): reported as TensorRT-LLM's client, its extra rows
/// kept as rows feeding no figure, TPOT derived from its own E2E, TTFT and tokens.
#[test]
fn tensorrt_llm_example_is_its_own_tool() {
    let runs = public("117-trtllm.txt");
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.source.tool, "TensorRT-LLM benchmark_serving.py");
    assert_eq!(run.source.parser, "vllm-bench-serve");
    assert_eq!(run.source.variant.as_deref(), Some("trtllm"));
    assert_eq!(run.source.semantics.itl, Some(ItlPer::Chunk));
    // User throughput = 1024 / 1.64344 s, the TTFT included: not 1000 / TPOT, and no figure.
    let user = row(run, "User throughput (tok/s)");
    assert_eq!((user.value.as_deref(), user.field.as_deref()), (Some("623.08"), None));
    assert!(row(run, "Mean Request AR").field.is_none());
    assert!(run.reported.get("per_user_tok_per_s").is_none());
    let want = (1643.44 - 12.83) / 1023.0;
    assert!((run.derived.tpot_ms.mean.unwrap() - want).abs() < 1e-4);
    assert_eq!(run.verdict, Verdict::Accepted);
    assert!(run.notes.iter().any(|n| n.code == "variant-trtllm"));
}

/// TensorRT-LLM's newest block, rendered from its source's format strings (benchmark_serving.py:
/// `Total requests` / `Failed requests`, `Std Dev` rows, the failed-requests banner lines inside the
/// block, the decoded-tokens and energy sections), every label padded to `width` (the script's
/// `{:<40} {:<10}` is width 40; its docs templates print the values a column further right).
fn trt_block(width: usize, pad_values: bool) -> String {
    let preamble =
        "Traffic request rate: inf\nBurstiness factor: 1.0 (Poisson process)\nMaximum request concurrency: 8\n";
    let mut text = format!("{preamble}{:=^50}\n", " Serving Benchmark Result ");
    for (label, value) in [
        ("Total requests:", "16"),
        ("Successful requests:", "15"),
        ("Failed requests:", "1"),
        ("Benchmark duration (s):", "20.00"),
        ("Total input tokens:", "15360"),
        ("Total generated tokens:", "7680"),
        ("Request throughput (req/s):", "0.75"),
        ("Output token throughput (tok/s):", "384.00"),
        ("Total Token throughput (tok/s):", "1152.00"),
        ("User throughput (tok/s):", "49.61"),
    ] {
        let value = if pad_values { format!("{value:<10}") } else { value.to_string() };
        text.push_str(&format!("{label:<width$} {value}\n"));
    }
    text.push_str("=======================!FAILED REQUESTS!=======================\n");
    text.push_str("Total failed requests: 1\n");
    text.push_str("=====================!CHECK LOG FOR ERRORS!====================\n");
    let sections: [(&str, &str, [&str; 6]); 5] = [
        (
            "Avg Decoded Tokens per Iter",
            "Avg Decoded Tokens per Iter",
            ["2.00", "2.00", "0.10", "1.80", "2.20", "2.19"],
        ),
        ("Time to First Token", "TTFT (ms)", ["100.00", "98.00", "5.00", "", "", "120.00"]),
        ("Time per Output Token (excl. 1st token)", "TPOT (ms)", ["20.00", "20.00", "0.50", "", "", "21.50"]),
        ("Inter-token Latency", "ITL (ms)", ["40.00", "40.00", "3.00", "", "", "45.00"]),
        ("End-to-end Latency", "E2EL (ms)", ["10320.00", "10300.00", "50.00", "", "", "10500.00"]),
    ];
    for (header, metric, v) in sections {
        text.push_str(&format!("{header:-^50}\n"));
        for (stat, value) in ["Mean", "Median", "Std Dev", "Min", "Max", "P99"].iter().zip(v) {
            if !value.is_empty() {
                let label = format!("{stat} {metric}:");
                let value = if pad_values { format!("{value:<10}") } else { value.to_string() };
                text.push_str(&format!("{label:<width$} {value}\n"));
            }
        }
    }
    text.push_str(&format!("{:-^50}\n", " Energy Metrics "));
    for (label, value) in [
        ("Total Energy (J):", "7000.0000"),
        ("Output Tokens per Second per Watt (tps/W):", "1.0971"),
        ("Total GPU Power (W):", "350.0000"),
    ] {
        text.push_str(&format!("{label:<width$} {value:<10}\n"));
    }
    text.push_str(&format!("{}\n", "=".repeat(50)));
    text
}

#[test]
fn tensorrt_llm_newest_block_reads_every_row() {
    let runs = common::run_all(trt_block(40, true).as_bytes(), "trt.txt").unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.source.tool, "TensorRT-LLM benchmark_serving.py");
    assert_eq!(run.totals.number("sent_requests"), Some(16.0));
    assert_eq!(run.totals.number("successful_requests"), Some(15.0));
    assert_eq!(run.totals.number("failed_requests"), Some(1.0));
    assert_eq!(run.workload.number("max_concurrency"), Some(8.0));
    for (name, std) in [("ttft_ms", 5.0), ("tpot_ms", 0.5), ("itl_ms", 3.0), ("e2e_ms", 50.0)] {
        assert_eq!(run.reported.stat(name).and_then(|s| s.get(StatKey::Std)), Some(std), "{name}");
    }
    // The failed-requests lines are known noise, every other line a known row.
    assert!(!run.notes.iter().any(|n| n.code == "not-a-row"), "{:?}", run.notes);
    for label in ["Total failed requests", "Mean Avg Decoded Tokens per Iter", "Total Energy (J)"] {
        assert!(row(run, label).field.is_none(), "{label}");
    }
    let want = (10320.0 - 100.0) / (7680.0 / 15.0 - 1.0);
    assert!((run.derived.tpot_ms.mean.unwrap() - want).abs() < 1e-4);
    assert_eq!(run.verdict, Verdict::Accepted, "{}", run.failures());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
    /// The value column anywhere right of the labels (TensorRT-LLM's docs print it one column
    /// further than the script), values padded or not: the same run.
    #[test]
    fn tensorrt_llm_block_reads_the_same_at_any_value_column(width in 40usize..52, pad in proptest::bool::ANY) {
        let want = common::figures_of(&common::run_all(trt_block(40, true).as_bytes(), "a.txt").unwrap()[0]);
        let runs = common::run_all(trt_block(width, pad).as_bytes(), "b.txt").unwrap();
        proptest::prop_assert_eq!(runs.len(), 1);
        proptest::prop_assert_eq!(runs[0].source.tool.as_str(), "TensorRT-LLM benchmark_serving.py");
        proptest::prop_assert_eq!(common::figures_of(&runs[0]), want);
    }
}

/// vLLM's own block, without TensorRT-LLM's rows, is still vLLM's.
#[test]
fn a_vllm_block_without_the_trt_rows_stays_vllm() {
    let text: String = trt_block(40, true)
        .lines()
        .filter(|l| !l.starts_with("Total requests") && !l.starts_with("User throughput"))
        .filter(|l| !l.contains("Avg Decoded") && !l.contains("Energy") && !l.contains("Power") && !l.contains("tps/W"))
        .filter(|l| !l.contains("FAILED") && !l.contains("CHECK LOG") && !l.starts_with("Total failed"))
        .map(|l| format!("{l}\n"))
        .collect();
    let runs = common::run_all(text.as_bytes(), "vllm.txt").unwrap();
    assert_eq!(runs[0].source.tool, "vllm bench serve");
    assert_ne!(runs[0].source.variant.as_deref(), Some("trtllm"));
}

/// LMDeploy's profile_restful_api.py of 2024-10 to 2025-12 prints sglang 0.1.24-0.3.5's block:
/// read as that (the `Backend: lmdeploy` row names the server, not the client), with its meanings.
#[test]
fn lmdeploy_restful_copy_of_the_old_sglang_block_is_read_as_it() {
    let runs = public("118-lmdeploy.txt");
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(
        (run.source.tool.as_str(), run.source.variant.as_deref()),
        ("sglang.bench_serving", Some("0.1.24-0.3.5"))
    );
    assert_eq!(run.workload.text("backend"), Some("lmdeploy"));
    assert_eq!(run.source.semantics.itl, Some(ItlPer::Chunk));
    assert_eq!(run.verdict, Verdict::Accepted);
}

/// LMDeploy's copy from 2025-12 (text and vision token rows, still no concurrency rows and no total
/// token rate: no sglang version prints that), rendered from its format strings: LMDeploy's tool,
/// and its ITL per chunk even with the sglang-native backend, which sglang itself splits per token.
#[test]
fn lmdeploy_restful_copy_of_2025_12_is_its_own_tool() {
    let row = |l: &str, v: &str| format!("{l:<40} {v:<10}\n");
    let mut text = format!("\n{:=^50}\n", " Serving Benchmark Result ");
    for (l, v) in [
        ("Backend:", "sglang"),
        ("Traffic request rate:", "inf"),
        ("Successful requests:", "16"),
        ("Benchmark duration (s):", "10.00"),
        ("Total input tokens:", "16384"),
        ("Total input text tokens:", "16384"),
        ("Total input vision tokens:", "0"),
        ("Total generated tokens:", "8192"),
        ("Total generated tokens (retokenized):", "8190"),
        ("Request throughput (req/s):", "1.60"),
        ("Input token throughput (tok/s):", "1638.40"),
        ("Output token throughput (tok/s):", "819.20"),
    ] {
        text.push_str(&row(l, v));
    }
    for (header, rows) in [
        ("End-to-End Latency", vec![("Mean E2E Latency (ms):", "7865.00"), ("Median E2E Latency (ms):", "7865.00")]),
        (
            "Time to First Token",
            vec![("Mean TTFT (ms):", "200.00"), ("Median TTFT (ms):", "200.00"), ("P99 TTFT (ms):", "210.00")],
        ),
        (
            "Time per Output Token (excl. 1st token)",
            vec![("Mean TPOT (ms):", "15.00"), ("Median TPOT (ms):", "15.00"), ("P99 TPOT (ms):", "15.10")],
        ),
        (
            "Inter-token Latency",
            vec![("Mean ITL (ms):", "150.00"), ("Median ITL (ms):", "150.00"), ("P99 ITL (ms):", "152.00")],
        ),
    ] {
        text.push_str(&format!("{header:-^50}\n"));
        for (l, v) in rows {
            text.push_str(&row(l, v));
        }
    }
    text.push_str(&format!("{}\n", "=".repeat(50)));
    let runs = common::run_all(text.as_bytes(), "lmdeploy.txt").unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.source.tool, "LMDeploy profile_restful_api.py");
    assert_eq!(run.source.variant.as_deref(), Some("lmdeploy-2025.12+"));
    assert_eq!(run.workload.text("backend"), Some("sglang"));
    assert_eq!(run.source.semantics.itl, Some(ItlPer::Chunk), "LMDeploy's copy never splits a chunk per token");
    let tpc = run.derived.tokens_per_chunk.unwrap();
    assert!((tpc - 10.0).abs() < 0.01, "{tpc}");
    assert_eq!(run.verdict, Verdict::Accepted, "{}", run.failures());
    // The same rows with sglang's concurrency rows are sglang's own (0.5.5.post2-0.5.5.post3).
    let sglang = text.replace(
        &row("Successful requests:", "16"),
        &format!("{}{}", row("Max request concurrency:", "not set"), row("Successful requests:", "16")),
    );
    let runs = common::run_all(sglang.as_bytes(), "sglang.txt").unwrap();
    assert_eq!(runs[0].source.tool, "sglang.bench_serving");
}

/// `Backend: lmdeploy` on a block with sglang's concurrency rows (as published by runs of
/// `python -m sglang.bench_serving --backend lmdeploy`) is sglang's client.
#[test]
fn an_sglang_run_against_lmdeploy_is_sglang() {
    let text = std::fs::read_to_string(common::samples_dir().join("public/110-sglang.txt")).unwrap();
    let first = &text[..text.find("离线分析").unwrap()];
    let text = first.replace(
        "Backend:                                 sglang    ",
        "Backend:                                 lmdeploy  ",
    );
    let runs = common::run_all(text.as_bytes(), "x.txt").unwrap();
    assert_eq!(runs[0].workload.text("backend"), Some("lmdeploy"));
    assert_eq!(runs[0].source.tool, "sglang.bench_serving");
}

/// LMDeploy's older profile_throughput.py report: the list-valued lines read item by item (TTFT
/// min/max/ave in seconds, the per-token latency percentiles), no TPOT (no E2E printed), the rates
/// held to the totals.
#[test]
fn lmdeploy_profile_throughput_report() {
    let runs = public("119-lmdeploy.txt");
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.source.parser, "lmdeploy-profile-throughput");
    assert_eq!(run.source.variant.as_deref(), Some("2023.12-2025.01"));
    let ttft = run.reported.stat("ttft_ms").unwrap();
    assert_eq!((ttft.get(StatKey::Min), ttft.get(StatKey::Max), ttft.mean()), (Some(68.0), Some(4066.0), Some(285.0)));
    let itl = run.reported.stat("itl_ms").unwrap();
    let want = [(50.0, 0.0), (75.0, 94.0), (95.0, 169.0), (99.0, 227.0)];
    for (p, v) in want {
        assert_eq!(itl.get(StatKey::P(p)), Some(v), "p{p}");
    }
    assert_eq!(run.source.semantics.itl, Some(ItlPer::Token));
    assert_eq!(run.totals.number("duration_s"), Some(399.739));
    assert_eq!(run.workload.number("max_concurrency"), Some(256.0));
    assert!(run.derived.tpot_ms.mean.is_none() && run.derived.tpot_ms.reason.is_some());
    let rates = run.checks.iter().find(|c| c.id.as_str() == "throughput-totals").unwrap();
    assert_eq!(rates.status, bench_normalize::report::Status::Pass, "{}", rates.message);
    assert_eq!(run.verdict, Verdict::Accepted);
    // Every item a row of its own, naming the one figure it fed.
    let items: Vec<_> = run.rows.iter().filter(|r| r.label.starts_with("first token latency")).collect();
    assert_eq!(items.len(), 3);
    assert_eq!(items[2].field.as_deref(), Some("reported.ttft_ms.mean"));
}

/// The report's first form (`first_token latency(min, max, ave): 0.050s, ...`, the unit glued to
/// each item): the figures in ms, reported as either of the two scripts that printed it.
#[test]
fn lmdeploy_first_form_with_glued_seconds() {
    let text = "\n--------------------------------------------------\nconcurrency: 64\nelapsed_time: 120.500s\n\n\
first_token latency(min, max, ave): 0.050s, 2.500s, 0.400s\n\n\
number of prompt tokens: 200000\nnumber of completion tokens: 180000\n\
token throughput (completion token): 1493.776 token/s\n\
token throughput (prompt + completion token): 3153.527 token/s\n\
RPS (request per second): 8.299 req/s\nRPM (request per minute): 497.925 req/min\n\
--------------------------------------------------\n\n";
    let runs = common::run_all(text.as_bytes(), "lmdeploy.txt").unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.source.variant.as_deref(), Some("2023.11"));
    assert_eq!(run.source.tool, "LMDeploy profile_throughput.py or profile_restful_api.py");
    let ttft = run.reported.stat("ttft_ms").unwrap();
    assert_eq!((ttft.get(StatKey::Min), ttft.get(StatKey::Max), ttft.mean()), (Some(50.0), Some(2500.0), Some(400.0)));
    assert_eq!(run.totals.number("duration_s"), Some(120.5));
    assert!(!run.notes.iter().any(|n| n.code.starts_with("value-")), "{:?}", run.notes);
    assert_eq!(run.verdict, Verdict::Accepted, "{}", run.failures());
}

/// LightLLM's copy of vLLM 0.1.x's script prints the same five lines; its `total tokens:` line
/// before them is what tells it apart: the vLLM run stays vLLM's, its LightLLM run is
/// LightLLM's, both with vLLM 0.1.x's meanings.
#[test]
fn lightllm_copy_told_apart_by_its_total_tokens_line() {
    let runs = public("120-lightllm.txt");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].source.variant.as_deref(), Some("script-0.1"));
    assert_eq!(runs[0].source.tool, "benchmarks/benchmark_serving.py (vLLM 0.1.x)");
    let run = &runs[1];
    assert_eq!(run.source.variant.as_deref(), Some("lightllm"));
    assert_eq!(run.source.tool, "LightLLM test/benchmark_serving.py");
    assert_eq!(run.totals.number("duration_s"), Some(333.1));
    assert_eq!(run.reported.stat("e2e_ms").and_then(|s| s.mean()), Some(113860.0));
    assert_eq!(run.reported.stat("latency_per_output_token_ms").and_then(|s| s.mean()), Some(1540.0));
    let total = row(run, "total tokens");
    assert_eq!(
        (total.value.as_deref(), total.field.as_deref(), total.scope.as_deref()),
        (Some("494250"), None, Some("preamble"))
    );
    for run in &runs {
        assert!(run.derived.tpot_ms.mean.is_none());
        assert_eq!(run.verdict, Verdict::Accepted);
    }
}
