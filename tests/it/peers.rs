//! Peers' exports (samples/peers: NVIDIA AIPerf and guidellm against the same emulated server):
//! each tool's rows mean one thing in the canonical report.

use crate::common;

use bench_normalize::Run;
use bench_normalize::report::{StatKey, Status, TpotMethod};

fn one(file: &str) -> Run {
    let mut runs = common::normalize_file(&common::samples_dir().join("peers").join(file))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(runs.len(), 1);
    runs.remove(0)
}

/// What the emulator measured for the run: its realized TPOT and tokens per decode chunk.
struct Truth {
    tpot_ms: f64,
    tokens_per_chunk: f64,
}

fn truth(file: &str) -> Truth {
    let t = common::read_json(&common::samples_dir().join("peers").join(file));
    let m = &t["measured_by_emulator"];
    Truth {
        tpot_ms: m["mean_tpot_ms"].as_f64().unwrap(),
        tokens_per_chunk: m["mean_tokens_per_decode_chunk"].as_f64().unwrap(),
    }
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
    assert!(common::is_truth(d, t.tpot_ms, false), "{d} vs {}", t.tpot_ms);
    assert_eq!(run.derived.tpot_ms.method, Some(TpotMethod::E2eTtftTokens));
    // Its TPOT agrees with the derivation; its chunk latency is ~10 tokens per chunk.
    assert!(run.checks.iter().any(|c| c.id == "tpot-agreement" && c.status == Status::Pass));
    assert!(common::is_truth(run.derived.tokens_per_chunk.unwrap(), t.tokens_per_chunk, false));
    assert_eq!(run.workload.number("max_concurrency"), Some(4.0));
}

#[test]
fn guidellm_itl_is_a_tpot_and_its_tpot_includes_ttft() {
    let run = one("guidellm-s2.benchmarks.json");
    assert_eq!(run.source.parser, "guidellm-benchmarks");
    assert_eq!(row_field(&run, "metrics.inter_token_latency_ms.successful.mean"), Some("reported.tpot_ms.mean"));
    assert_eq!(
        row_field(&run, "metrics.time_per_output_token_ms.successful.mean"),
        Some("reported.latency_per_output_token_ms.mean")
    );
    let t = truth("guidellm-s2.truth.json");
    let d = run.derived.tpot_ms.mean.unwrap();
    assert!(common::is_truth(d, t.tpot_ms, false), "{d} vs {}", t.tpot_ms);
    // guidellm's own "TPOT" (13.05 ms) includes TTFT: it is kept, apart, and not what is derived.
    let l = run.reported.stat("latency_per_output_token_ms").unwrap().mean().unwrap();
    assert!((l - 13.05).abs() < 0.01, "{l}");
    // guidellm's own tokens per chunk, against the emulator's count.
    assert!(common::is_truth(run.reported.number("tokens_per_chunk").unwrap(), t.tokens_per_chunk, false));
    assert!(run.checks.iter().all(|c| c.status != Status::Fail), "{:?}", run.checks);
}

#[test]
fn guidellm_counting_chunks_as_tokens_is_said() {
    // No usage from the server, no requested length in the data: 53 "tokens" per request.
    let run = one("guidellm-s2nousagemaxtok.benchmarks.json");
    assert_eq!(run.totals.number("output_tokens"), Some(848.0));
    let check = run.checks.iter().find(|c| c.id == "token-count-source").unwrap();
    assert_eq!(check.status, Status::Fail);
    assert!(
        check.message.starts_with("53 tokens per request counted at 1 per streamed chunk where 512 were asked"),
        "{}",
        check.message
    );
}

#[test]
fn aiperf_console_tables_read_like_its_export() {
    // The console file alone, and the whole console log with AIPerf's own log lines around it.
    let console = one("aiperf-s2.profile_export_console.txt");
    let log = one("aiperf-s2.stdout.txt");
    let export = one("aiperf-s2.profile_export_aiperf.json");
    for run in [&console, &log] {
        assert_eq!(run.source.parser, "aiperf-console");
        assert_eq!(run.source.variant.as_deref(), Some("0.13"));
        // The wrapped label "Output Token Throughput Per User / (tokens/sec/user)" is one row.
        assert_eq!(
            row_field(run, "Output Token Throughput Per User (tokens/sec/user) (avg)"),
            Some("reported.per_user_tok_per_s")
        );
        assert_eq!(row_field(run, "Inter Token Latency (ms) (avg)"), Some("reported.tpot_ms.mean"));
        assert_eq!(run.reported.stat("e2e_ms").unwrap().mean(), Some(6692.73), "thousands separators read");
        let d = run.derived.tpot_ms.mean.unwrap();
        assert!(common::is_truth(d, truth("aiperf-s2.truth.json").tpot_ms, false), "{d}");
        assert_eq!(d, export.derived.tpot_ms.mean.unwrap(), "console and JSON export derive the same TPOT");
        assert_eq!(run.verdict, bench_normalize::report::Verdict::Accepted);
    }
    // Every cell is kept, "N/A" ones too; the log has one more row, the footer after its tables
    // (`Benchmark Duration: 26.82 sec`), which the console file does not print.
    let footer: Vec<&bench_normalize::report::Row> =
        log.rows.iter().filter(|r| r.scope.as_deref() == Some("footer")).collect();
    assert_eq!(footer.len(), 1, "{footer:?}");
    assert_eq!(footer[0].field.as_deref(), Some("totals.duration_s"));
    assert_eq!(log.totals.number("duration_s"), Some(26.82));
    assert_eq!(console.rows.len() + 1, log.rows.len());
    assert!(
        console
            .rows
            .iter()
            .any(|r| r.label == "Request Throughput (requests/sec) (p99)" && r.value.as_deref() == Some("N/A"))
    );
}

#[test]
fn aiperf_csv_export_has_the_chunk_latency_and_the_run_totals() {
    let run = one("aiperf-s2.profile_export_aiperf.csv");
    assert_eq!(run.source.parser, "aiperf-csv");
    assert_eq!(run.source.format.as_str(), "result-csv");
    assert_eq!(row_field(&run, "Inter Token Latency (ms) (avg)"), Some("reported.tpot_ms.mean"));
    assert_eq!(row_field(&run, "Inter Chunk Latency (ms) (avg)"), Some("reported.itl_ms.mean"));
    // The "Metric,Value" table below the statistics: a value column reads as the metric alone.
    assert_eq!(row_field(&run, "Benchmark Duration (sec)"), Some("totals.duration_s"));
    assert_eq!(run.totals.number("output_tokens"), Some(8192.0));
    let t = truth("aiperf-s2.truth.json");
    let d = run.derived.tpot_ms.mean.unwrap();
    assert!(common::is_truth(d, t.tpot_ms, false), "{d}");
    // With the chunk latency and the totals, every rule has something to check.
    assert!(common::is_truth(run.derived.tokens_per_chunk.unwrap(), t.tokens_per_chunk, false));
    for id in ["tpot-bounds", "decode-within-e2e", "e2e-capacity", "throughput-totals", "tpot-agreement"] {
        assert!(run.checks.iter().any(|c| c.id == id && c.status == Status::Pass), "{id}: {:?}", run.checks);
    }
}

#[test]
fn guidellm_console_tables_are_one_run_per_benchmark_row() {
    let run = one("guidellm-s2.stdout.txt");
    assert_eq!(run.source.parser, "guidellm-console");
    assert_eq!(run.workload.text("strategy"), Some("concurrent@4"));
    // Columns named by their grouped headers, read under their table's title.
    let itl = run.rows.iter().find(|r| r.label == "ITL ms Mean").unwrap();
    assert_eq!(itl.section.as_deref(), Some("Request Latency Statistics (Completed Requests)"));
    assert_eq!(itl.field.as_deref(), Some("reported.tpot_ms.mean"));
    assert_eq!(row_field(&run, "TPOT ms Mean"), Some("reported.latency_per_output_token_ms.mean"));
    assert_eq!(run.totals.number("output_tokens"), Some(8192.0));
    // "6.7 ± 0.002" s: the mean, in ms.
    assert_eq!(run.reported.stat("e2e_ms").unwrap().mean(), Some(6700.0));
    let t = truth("guidellm-s2.truth.json").tpot_ms;
    assert!(common::is_truth(run.reported.stat("tpot_ms").unwrap().mean().unwrap(), t, true));
    // The console prints E2E to 0.1 s: over 511 decode tokens that bounds the derivation to 0.1 ms.
    let d = run.derived.tpot_ms.mean.unwrap();
    assert!((d - t).abs() <= 0.05 * 1000.0 / 511.0, "{d} vs {t}");
    assert_eq!(run.verdict, bench_normalize::report::Verdict::Accepted);
}

#[test]
fn genai_perf_console_csv_and_json_read_alike_and_its_inter_token_latency_is_the_tpot() {
    // Real genai-perf 0.0.16 runs (perf_analyzer 2.51) against the emulator: k = 10 tokens per
    // chunk on completions and chat, k = 1 (s1).
    for run_name in ["genaiperf-s2", "genaiperf-chat-s2", "genaiperf-s1"] {
        let truth = common::read_json(&common::samples_dir().join("peers").join(format!("{run_name}.truth.json")));
        let measured = truth["measured_by_emulator"]["mean_tpot_ms"].as_f64().unwrap();
        let console = one(&format!("{run_name}.stdout.txt"));
        let csv = one(&format!("{run_name}.profile_export_genai_perf.csv"));
        let json = one(&format!("{run_name}.profile_export_genai_perf.json"));
        assert_eq!(
            [console.source.parser.as_str(), csv.source.parser.as_str(), json.source.parser.as_str()],
            ["genai-perf-console", "genai-perf-csv", "genai-perf-export"],
            "{run_name}"
        );
        assert_eq!(row_field(&console, "Inter Token Latency (ms) (avg)"), Some("reported.tpot_ms.mean"));
        assert_eq!(row_field(&csv, "Inter Token Latency (ms) (avg)"), Some("reported.tpot_ms.mean"));
        assert_eq!(row_field(&json, "inter_token_latency.avg"), Some("reported.tpot_ms.mean"));
        // "Time To Second Token" is the gap to the second chunk: kept, feeding nothing.
        assert_eq!(
            console.rows.iter().find(|r| r.label == "Time To Second Token (ms) (avg)").map(|r| r.field.is_none()),
            Some(true)
        );
        for run in [&console, &csv, &json] {
            let d = run.derived.tpot_ms.mean.unwrap();
            assert!(
                common::is_truth(d, measured, false),
                "{run_name} {}: derived {d} vs measured {measured}",
                run.source.parser
            );
            let printed = run.reported.stat("tpot_ms").unwrap().mean().unwrap();
            assert!(
                common::is_truth(printed, measured, true),
                "{run_name} {}: printed {printed} vs measured {measured}",
                run.source.parser
            );
            assert_eq!(run.verdict, bench_normalize::report::Verdict::Accepted, "{run_name} {}", run.source.parser);
        }
        assert_eq!(json.workload.number("max_concurrency"), Some(4.0));
    }
}

/// inference-perf 0.7.0 against the emulator (k = 10): the summary and the stage report read alike;
/// its time_per_output_token is a TPOT, its inter_token_latency is per token with zeros inside
/// chunks (mean = TPOT, median 0, p99 ~ a chunk gap), its NTPOT includes the TTFT.
#[test]
fn inference_perf_lifecycle_reports_and_their_three_per_token_figures() {
    let truth = common::read_json(&common::samples_dir().join("peers/inference-perf-s2.truth.json"));
    let measured = truth["measured_by_emulator"]["mean_tpot_ms"].as_f64().unwrap();
    let chunk_gap = truth["measured_by_emulator"]["mean_chunk_gap_ms"].as_f64().unwrap();
    let summary = one("inference-perf-s2.summary_lifecycle_metrics.json");
    let stage = one("inference-perf-s2.stage_0_lifecycle_metrics.json");
    for run in [&summary, &stage] {
        assert_eq!(run.source.parser, "inference-perf-lifecycle");
        assert_eq!(run.source.semantics.itl, Some(bench_normalize::report::ItlPer::Token));
        let d = run.derived.tpot_ms.mean.unwrap();
        assert!(common::is_truth(d, measured, false), "derived {d} vs measured {measured}");
        let tool = run.reported.stat("tpot_ms").unwrap().mean().unwrap();
        assert!(common::is_truth(tool, measured, false), "time_per_output_token {tool} vs measured {measured}");
        let itl = run.reported.stat("itl_ms").unwrap();
        assert!(common::is_truth(itl.mean().unwrap(), measured, false), "mean ITL {:?}", itl.mean());
        assert_eq!(itl.get(StatKey::P(50.0)), Some(0.0), "tokens inside a chunk have a zero gap");
        let p99 = itl.get(StatKey::P(99.0)).unwrap();
        assert!((p99 / chunk_gap - 1.0).abs() < 0.1, "ITL p99 {p99} vs a chunk gap {chunk_gap}");
        // NTPOT = E2E / N, TTFT included: above the TPOT by about TTFT / N.
        let ntpot = run.reported.stat("latency_per_output_token_ms").unwrap().mean().unwrap();
        let e2e = run.reported.stat("e2e_ms").unwrap().mean().unwrap();
        assert!((ntpot - e2e / 512.0).abs() < 0.01, "NTPOT {ntpot} vs E2E / 512 = {}", e2e / 512.0);
        assert_eq!(run.totals.number("output_tokens"), Some(8192.0));
        assert_eq!(run.verdict, bench_normalize::report::Verdict::Accepted);
    }
    assert_eq!(summary.derived.tpot_ms.mean, stage.derived.tpot_ms.mean);
}

/// EvalScope 1.14.1 against the emulator (k = 10, chat): its TPOT row is a TPOT and agrees with the
/// derivation from the mean latency, TTFT and output tokens; its ITL is the chunk gap (~k x TPOT);
/// an honest capture is accepted.
#[test]
fn evalscope_tpot_is_a_tpot_and_its_itl_is_the_chunk_gap() {
    let t = truth("evalscope-s2.truth.json");
    let raw = common::read_json(&common::samples_dir().join("peers/evalscope-s2.truth.json"));
    let chunk_gap = raw["measured_by_emulator"]["mean_chunk_gap_ms"].as_f64().unwrap();
    let run = one("evalscope-s2.stdout.txt");
    assert_eq!(run.source.parser, "evalscope-perf");
    assert_eq!(run.source.variant.as_deref(), Some("1.10"));
    assert_eq!(run.source.semantics.itl, Some(bench_normalize::report::ItlPer::Chunk));
    assert_eq!(row_field(&run, "Avg TPOT (ms)"), Some("reported.tpot_ms.mean"));
    assert_eq!(row_field(&run, "Avg ITL (ms)"), Some("reported.itl_ms.mean"));
    // Derived from the printed 6.684 s, 144.77 ms and 512 tokens: (6684 - 144.77) / 511, to the
    // report's six significant digits.
    let d = run.derived.tpot_ms.mean.unwrap();
    let six: f64 = format!("{:.5e}", (6684.0 - 144.77) / 511.0).parse().unwrap();
    assert_eq!(d, six);
    assert!(common::is_truth(d, t.tpot_ms, false), "derived {d} vs measured {}", t.tpot_ms);
    assert_eq!(run.derived.tpot_ms.method, Some(TpotMethod::E2eTtftTokens));
    let printed = run.reported.stat("tpot_ms").unwrap().mean().unwrap();
    assert_eq!(printed, 12.8);
    assert!(common::is_truth(printed, t.tpot_ms, true), "printed {printed} vs measured {}", t.tpot_ms);
    assert!(run.checks.iter().any(|c| c.id == "tpot-agreement" && c.status == Status::Pass));
    // ITL: the mean chunk gap, not a per-token time.
    let itl = run.reported.stat("itl_ms").unwrap();
    assert_eq!(itl.mean(), Some(125.76));
    assert!((itl.mean().unwrap() / chunk_gap - 1.0).abs() < 0.002, "ITL {:?} vs chunk gap {chunk_gap}", itl.mean());
    assert!(common::is_truth(run.derived.tokens_per_chunk.unwrap(), t.tokens_per_chunk, false));
    assert_eq!(run.reported.number("tokens_per_chunk"), Some(9.83));
    // The percentile table (a row per metric, a column per percentile).
    let tpot = run.reported.stat("tpot_ms").unwrap();
    assert_eq!(
        (tpot.get(StatKey::Min), tpot.get(StatKey::P(50.0)), tpot.get(StatKey::Max)),
        (Some(12.77), Some(12.8), Some(12.81))
    );
    assert_eq!(run.reported.stat("ttft_ms").unwrap().get(StatKey::P(99.0)), Some(157.93));
    assert_eq!(run.reported.stat("e2e_ms").unwrap().get(StatKey::P(50.0)), Some(6684.0));
    assert_eq!(itl.get(StatKey::P(50.0)), Some(128.11));
    // Totals: 16 of 16, 512 tokens each, 26.74 s.
    assert_eq!(run.totals.number("successful_requests"), Some(16.0));
    assert_eq!(run.totals.number("sent_requests"), Some(16.0));
    assert_eq!(run.totals.number("duration_s"), Some(26.74));
    assert_eq!(run.workload.number("max_concurrency"), Some(4.0));
    assert_eq!(run.verdict, bench_normalize::report::Verdict::Accepted);
}

/// Between EvalScope's tables, tqdm redraws its progress bars with carriage returns: a line of the
/// input split into several. `max_noise` counts lines of the input, so a progress line with more
/// redraws, or a log line more, keeps every table of the block; eight lines of other text still
/// end it (both directions of the same bound).
#[test]
fn evalscope_progress_bars_between_its_tables_count_as_the_lines_they_are() {
    let text = std::fs::read(common::samples_dir().join("peers/evalscope-s2.stdout.txt")).unwrap();
    let lines: Vec<&[u8]> = text.split(|b| *b == b'\n').collect();
    // The progress lines after the `Workload throughput` table (before the closing report).
    let last_row = lines.iter().position(|l| l.windows(16).any(|w| w == b"Completion tok/s")).unwrap();
    let after = last_row + 2;
    assert!(lines[after].starts_with(b"\rRunning[perf]"));
    let with = |extra: &[Vec<u8>]| {
        let mut out: Vec<Vec<u8>> = lines.iter().map(|l| l.to_vec()).collect();
        out.splice(after..after, extra.iter().cloned());
        common::run_all(&out.join(&b'\n'), "evalscope.txt").unwrap()
    };
    let clean = with(&[]);
    let rows = |runs: &[Run]| runs.iter().map(|r| r.rows.len()).sum::<usize>();
    assert_eq!(clean.len(), 1);
    let redraws: Vec<u8> = (0..40).flat_map(|i| format!("\rRunning[perf]: {i:>3}%|").into_bytes()).collect();
    for extra in [vec![redraws.clone()], vec![redraws.clone(), b"{}".to_vec()], vec![b"INFO x".to_vec(); 2]] {
        let runs = with(&extra);
        assert_eq!(rows(&runs), rows(&clean), "{:?}", String::from_utf8_lossy(&extra.concat()));
        assert_eq!(common::figures_of(&runs[0]), common::figures_of(&clean[0]));
    }
    // Eight lines of other text end the tables: the closing report's rows are not the block's.
    let cut = with(&vec![b"INFO x".to_vec(); 8]);
    assert!(rows(&cut) < rows(&clean), "{} rows", rows(&cut));
    assert_eq!(common::figures_of(&cut[0]), common::figures_of(&clean[0]));
}
