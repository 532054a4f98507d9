//! Real-world input (samples/noisy, built by its make.py from real captures): every result is found
//! in the noise, figures are those of the clean capture, labels outside a block never leak in.

use crate::common;

use bench_normalize::Run;
use bench_normalize::report::{Status, Verdict};

fn runs(file: &str) -> Vec<Run> {
    common::normalize_file(&common::samples_dir().join("noisy").join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn clean(file: &str) -> Run {
    common::normalize_file(&common::samples_dir().join(file)).unwrap().remove(0)
}

/// The figures of two runs agree (rows and line numbers may differ).
fn same_figures(noisy: &Run, clean: &Run, what: &str) {
    // The client's argument dump (`Namespace(...)` before the block) adds to the workload; a noisy
    // copy made without it has the rest of the workload, the same.
    let dump = |r: &Run| r.rows.iter().any(|row| row.label.starts_with("args."));
    if dump(noisy) == dump(clean) {
        assert_eq!(noisy.workload, clean.workload, "{what}: workload");
    } else {
        for (k, v) in noisy.workload.iter() {
            assert_eq!(Some(v), clean.workload.get(k), "{what}: workload.{k}");
        }
    }
    assert_eq!(noisy.totals, clean.totals, "{what}: totals");
    assert_eq!(noisy.reported, clean.reported, "{what}: reported");
    assert_eq!(noisy.derived, clean.derived, "{what}: derived");
    assert_eq!(noisy.verdict, clean.verdict, "{what}: verdict");
}

#[test]
fn server_lines_inside_the_block_colour_codes_and_crlf() {
    let got = runs("vllm-server-interleaved-crlf.txt");
    assert_eq!(got.len(), 1);
    same_figures(&got[0], &clean("captured/vllm-s2.stdout.txt"), "interleaved");
    // The three server lines inside the block are skipped with a note, not read as rows.
    assert_eq!(got[0].notes.iter().filter(|n| n.code == "not-a-row").count(), 3);
}

#[test]
fn a_dataset_label_before_the_block_does_not_leak_in() {
    let run = runs("sglang-colour-tabs.txt").remove(0);
    // `Total input tokens: 99999` is printed before the block by the dataset loader.
    assert_eq!(run.totals.number("input_tokens"), Some(16384.0));
    assert_eq!(run.totals.number("output_tokens"), Some(8192.0));
    same_figures(&run, &clean("captured/sglang-oai-s2.stdout.txt"), "colour and tabs");
}

#[test]
fn fenced_quoted_and_indented_pastes() {
    let md = runs("markdown-fenced-and-quoted.md");
    assert_eq!(md.len(), 2);
    // Both pasted without the lines before their banner: the figures of the block itself agree.
    let v = clean("captured/vllm-s1.stdout.txt");
    // Which rules could test the TPOT depends on the lines before the banner (the rate line makes
    // the run a closed loop): the figures agree, the tests that ran may not.
    let untested = |mut d: bench_normalize::report::Derived| {
        d.tpot_ms.tested_by.clear();
        d.tpot_ms.verified = None;
        d.tpot_ms.unverified_reason = None;
        d
    };
    assert_eq!(
        (md[0].totals.clone(), md[0].reported.clone(), untested(md[0].derived.clone())),
        (v.totals, v.reported, untested(v.derived))
    );
    // The quoted SGLang block lost its preamble and its trailing spaces, nothing else.
    let s = clean("captured/sglang-s1.stdout.txt");
    assert_eq!(
        (md[1].totals.clone(), md[1].reported.clone(), md[1].derived.clone()),
        (s.totals, s.reported, s.derived)
    );
    let yaml = runs("yaml-embedded.yaml");
    assert_eq!(yaml.len(), 2);
    assert_eq!(yaml[0].derived, clean("captured/sglang-oai-s3.stdout.txt").derived);
    assert_eq!(yaml[1].reported, clean("captured/vllm-s3.stdout.txt").reported);
}

#[test]
fn a_block_on_one_line_and_a_block_in_an_escaped_json_log() {
    let one = runs("one-line.txt").remove(0);
    let c = clean("captured/sglang-oai-s6.stdout.txt");
    assert_eq!(
        (one.totals.clone(), one.reported.clone(), one.derived.clone(), one.verdict),
        (c.totals, c.reported, c.derived, Verdict::Accepted)
    );
    let log = runs("escaped-json-log.jsonl").remove(0);
    let c = clean("captured/vllm-s6.stdout.txt");
    assert_eq!((log.totals.clone(), log.reported.clone(), log.verdict), (c.totals, c.reported, Verdict::Accepted));
    assert_eq!(log.source.first_line, Some(2));
}

#[test]
fn stray_characters_and_annotations_are_dropped_but_a_second_number_is_not_guessed() {
    let run = runs("annotated-values.txt").remove(0);
    let c = clean("captured/vllm-s3.stdout.txt");
    let mean = |r: &Run, s: &str| r.reported.stat(s).and_then(|s| s.mean());
    assert_eq!(mean(&run, "ttft_ms"), mean(&c, "ttft_ms"));
    assert_eq!(mean(&run, "itl_ms"), mean(&c, "itl_ms"));
    assert_eq!(mean(&run, "tpot_ms"), mean(&c, "tpot_ms"));
    // `P99 ITL (ms): 61.10 61.02`: kept as printed, the figure absent, a note says why.
    let itl = run.reported.stat("itl_ms").unwrap();
    assert_eq!(itl.get(bench_normalize::report::StatKey::P(99.0)), None);
    let row = run.rows.iter().find(|r| r.label == "P99 ITL (ms)").unwrap();
    assert_eq!(row.value.as_deref(), Some("61.10 61.02"));
    assert!(run.notes.iter().any(|n| n.code == "value-unreadable" && n.message.contains("61.10 61.02")));
    assert_eq!(run.notes.iter().filter(|n| n.code == "value-cleaned").count(), 3);
}

#[test]
fn a_markdown_table_of_the_rows() {
    let run = runs("markdown-table.md").remove(0);
    let c = clean("captured/sglang-oai-s2.stdout.txt");
    assert_eq!(run.derived.tpot_ms, c.derived.tpot_ms);
    assert_eq!(run.totals, c.totals);
    assert!(run.notes.iter().any(|n| n.code == "markdown-table"));
    assert!(run.checks.iter().any(|c| c.id == "complete-block" && c.status == Status::Pass));
}

#[test]
fn a_run_cut_off_by_a_crash_then_the_next_run() {
    let got = runs("cut-off-then-next-run.txt");
    assert_eq!(got.len(), 2);
    // Cut before the TPOT and E2E rows: nothing to derive TPOT from, so nothing usable.
    assert_eq!(got[0].verdict, Verdict::Unusable);
    let check = got[0].checks.iter().find(|c| c.id == "complete-block").unwrap();
    assert_eq!(
        check.message,
        "the block was cut off after line 14 (the lines after it are not rows and no closing line came); missing: reported.tpot_ms or reported.e2e_ms, reported.itl_ms"
    );
    // The next run keeps its own preamble (read after the cut block ended).
    same_figures(&got[1], &clean("captured/vllm-s1.stdout.txt"), "next run");
}

#[test]
fn three_tools_in_one_stream_with_bars_and_warnings() {
    let got = runs("mixed-tools-one-stream.txt");
    let parsers: Vec<(&str, Option<&str>)> =
        got.iter().map(|r| (r.source.parser.as_str(), r.source.variant.as_deref())).collect();
    assert_eq!(
        parsers,
        [
            ("vllm-bench-serve", Some("0.13+")),
            ("sglang-bench-serving", Some("0.5.3.post3-0.5.5.post1")),
            ("vllm-bench-serve", Some("rust-0.33"))
        ]
    );
    same_figures(&got[0], &clean("versions/vllm0.13.0-s1.stdout.txt"), "vllm 0.13");
    same_figures(&got[1], &clean("versions/sglang0.5.5.post1-oai-s2.stdout.txt"), "sglang 0.5.5.post1");
    same_figures(&got[2], &clean("versions/vllmrs0.33.0-s2.stdout.txt"), "vllm-rs");
    // The Rust client's steady-state block is its own section of the same run.
    let ss = got[2].reported.get("steady_state").expect("steady state");
    assert!(matches!(ss, bench_normalize::report::Figure::Group(_)));
    assert_eq!(got[2].reported.stat("ttft_ms").unwrap().mean(), Some(136.35));
    assert_eq!(got[2].reported.stat("steady_state.ttft_ms").unwrap().mean(), Some(136.18));
}

#[test]
fn the_vllm_rs_sweep_gives_one_run_per_step_with_its_steady_state() {
    let got = common::normalize_file(&common::samples_dir().join("versions/vllmrs0.33.0-sweep.stdout.txt")).unwrap();
    let (steps, summary): (Vec<&bench_normalize::Run>, Vec<&bench_normalize::Run>) =
        got.iter().partition(|r| r.source.parser == "vllm-bench-serve");
    let figures: Vec<(Option<f64>, Option<f64>)> = steps
        .iter()
        .map(|r| (r.workload.number("max_concurrency"), r.reported.number("steady_state.output_chunks_per_s")))
        .collect();
    assert_eq!(figures, [(Some(1.0), Some(8.31)), (Some(2.0), Some(16.47)), (Some(4.0), Some(32.65))]);
    // The Sweep Summary after the steps repeats them: folded into each step's run as a check
    // (tests/it/summary_fold.rs), no run of its own.
    assert!(summary.is_empty(), "{} summary runs", summary.len());
    for r in &steps {
        let c = r.checks.iter().find(|c| c.id == "summary-agreement").unwrap();
        assert_eq!(c.status, bench_normalize::report::Status::Pass, "{}", c.message);
    }
    for r in &steps {
        // The steady-state rows never feed the main figures.
        assert_eq!(
            r.rows
                .iter()
                .filter(|row| row.section.as_deref() == Some("Steady-State Metrics")
                    && row.field.as_deref().is_some_and(|f| !f.starts_with("reported.steady_state")))
                .count(),
            0
        );
    }
}

#[test]
fn nothing_found_in_pure_noise() {
    let noise = "INFO 08-28 22:41:28 [metrics.py:351] Avg prompt throughput: 0.0 tokens/s\n\u{1b}[32mok\u{1b}[0m\nTotal input tokens: 16384\n";
    let e = bench_normalize::normalize_str(noise, "noise.log").unwrap_err();
    assert_eq!(e.exit_code(), bench_normalize::ExitCode::NoResult);
}

#[test]
fn invalid_utf8_nul_bytes_and_no_final_newline_around_a_block() {
    let mut bytes = b"\x00\x00\xff\xfe".to_vec();
    bytes.extend(std::fs::read(common::samples_dir().join("captured/vllm-s1.stdout.txt")).unwrap());
    bytes.extend(b"\x00trailing \xc3\x28 garbage");
    let runs = {
        let mut v = Vec::new();
        bench_normalize::normalize(&bytes[..], "bytes", &bench_normalize::Options::default(), &mut |r| {
            v.push(r);
            Ok(())
        })
        .unwrap();
        v
    };
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].derived, clean("captured/vllm-s1.stdout.txt").derived);
}

/// A reader of `n` bytes of 'x' without a newline, made on the fly.
struct Xs(u64);
impl std::io::Read for Xs {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (buf.len() as u64).min(self.0) as usize;
        buf[..n].fill(b'x');
        self.0 -= n as u64;
        Ok(n)
    }
}

#[test]
fn a_gigabyte_without_a_newline_is_read_in_bounded_memory() {
    let reader = std::io::BufReader::with_capacity(1 << 20, Xs(1 << 30));
    let e =
        bench_normalize::normalize(reader, "huge", &bench_normalize::Options::default(), &mut |_| Ok(())).unwrap_err();
    assert_eq!(e.exit_code(), bench_normalize::ExitCode::NoResult);
}

#[test]
fn a_block_of_100k_rows() {
    // `--metric-percentiles` with 100k values: 100k known rows in one section.
    let mut text = String::from(
        "============ Serving Benchmark Result ============\nSuccessful requests:                     16\nBenchmark duration (s):                  26.74\nTotal generated tokens:                  8192\n---------------Time to First Token----------------\nMean TTFT (ms):                          140.14\n",
    );
    for i in 1..=100_000u32 {
        text.push_str(&format!(
            "P{:.3} TTFT (ms):                      {:.2}\n",
            i as f64 / 1000.0,
            100.0 + i as f64 / 1000.0
        ));
    }
    text.push_str("----------------End-to-end Latency----------------\nMean E2EL (ms):                          6682.24\n==================================================\n");
    let runs = bench_normalize::normalize_str(&text, "big").unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].rows.len(), 100_000 + 5);
    assert_eq!(runs[0].reported.stat("ttft_ms").unwrap().iter().count(), 100_001);
    assert_eq!(runs[0].derived.tpot_ms.mean.map(|m| (m * 100.0).round() / 100.0), Some(12.8));
    // 100k percentiles rising evenly from 100 to 200 ms describe values of mean ~150, not the
    // printed 140.14 over 16 requests: distribution-possible says so; nothing else fails.
    assert!(
        runs[0].checks.iter().all(|c| c.status != Status::Fail || c.id == "distribution-possible"),
        "{:?}",
        runs[0].checks
    );
}

#[test]
fn the_peers_tables_in_one_stream_each_read_as_alone() {
    let got = runs("peers-one-stream.txt");
    let parsers: Vec<&str> = got.iter().map(|r| r.source.parser.as_str()).collect();
    assert_eq!(
        parsers,
        [
            "vllm-bench-serve",
            "aiperf-console",
            "guidellm-console",
            "vllm-bench-serve",
            "vllm-bench-serve",
            "vllm-bench-serve",
            "genai-perf-console"
        ]
    );
    same_figures(&got[0], &clean("captured/vllm-s2.stdout.txt"), "vllm");
    same_figures(&got[1], &clean("peers/aiperf-s2.stdout.txt"), "aiperf");
    same_figures(&got[2], &clean("peers/guidellm-s2.stdout.txt"), "guidellm");
    // The sweep's three step blocks, its summary lines folded into them, as in the sweep's own log.
    let sweep = common::normalize_file(&common::samples_dir().join("versions/vllmrs0.33.0-sweep.stdout.txt")).unwrap();
    assert_eq!(sweep.len(), 3);
    for (i, (noisy, alone)) in got[3..6].iter().zip(&sweep).enumerate() {
        same_figures(noisy, alone, &format!("vllm-rs sweep run {}", i + 1));
    }
    same_figures(&got[6], &clean("peers/genaiperf-s2.stdout.txt"), "genai-perf");
}

// ------------------------------------------------------------------------------------------------
// Issue 16: detection errors

fn sample_text(name: &str) -> String {
    std::fs::read_to_string(common::samples_dir().join(name)).unwrap()
}

/// Every run of `text`, read as a stream and, from a file, as `normalize_file` reads it.
fn both_ways(text: &str, name: &str) -> Vec<Vec<Run>> {
    let streamed = bench_normalize::normalize_str(text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let path = std::env::temp_dir().join(format!("bn-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let mut from_file = Vec::new();
    bench_normalize::normalize_file(
        std::fs::File::open(&path).unwrap(),
        name,
        &bench_normalize::Options::default(),
        &mut |r: Run| {
            from_file.push(r);
            Ok(())
        },
    )
    .unwrap_or_else(|e| panic!("{name} (file): {e}"));
    let _ = std::fs::remove_file(path);
    vec![streamed, from_file]
}

#[test]
fn a_text_log_whose_first_line_is_a_json_log_record() {
    // It was read as JSON Lines: the text lines were "malformed JSON" and the block was missed.
    let text = format!("{{\"level\":\"info\",\"msg\":\"starting\"}}\n{}", sample_text("captured/vllm-s2.stdout.txt"));
    for runs in both_ways(&text, "json-first.log") {
        assert_eq!(runs.len(), 1);
        same_figures(&runs[0], &clean("captured/vllm-s2.stdout.txt"), "after a JSON log record");
        assert_eq!(runs[0].source.parser, "vllm-bench-serve");
        assert_eq!(runs[0].source.first_line, clean("captured/vllm-s2.stdout.txt").source.first_line.map(|l| l + 1));
    }
}

#[test]
fn a_text_log_after_more_json_log_records_than_the_first_look_takes() {
    // 150 KB of JSON records (past the 64 KiB looked at first), the block, a record cut short.
    let mut text = String::new();
    for i in 0..2000 {
        text.push_str(&format!(
            "{{\"ts\": \"2026-11-29T19:00:00Z\", \"level\": \"info\", \"msg\": \"warm-up {i}\"}}\n"
        ));
    }
    text.push_str(&sample_text("versions/sglang0.5.5.post1-oai-s2.stdout.txt"));
    text.push_str("{\"level\": \"info\", \"msg\": \"done\n");
    for runs in both_ways(&text, "json-records.log") {
        assert_eq!(runs.len(), 1);
        same_figures(&runs[0], &clean("versions/sglang0.5.5.post1-oai-s2.stdout.txt"), "after 2000 JSON records");
    }
}

#[test]
fn result_json_lines_and_a_text_block_in_one_input_give_both_runs_in_order() {
    // `cat result.jsonl stdout.txt`: the result records were read, the block was missed.
    let jsonl = sample_text("captured/sglang-s2.result.jsonl");
    let text = format!("{jsonl}{}", sample_text("captured/vllm-s2.stdout.txt"));
    let alone = common::normalize_file(&common::samples_dir().join("captured/sglang-s2.result.jsonl")).unwrap();
    for runs in both_ways(&text, "mixed.log") {
        assert_eq!(runs.len(), alone.len() + 1);
        for (got, want) in runs.iter().zip(&alone) {
            same_figures(got, want, "result record");
            assert_eq!(got.source.parser, "sglang-result-jsonl");
        }
        same_figures(runs.last().unwrap(), &clean("captured/vllm-s2.stdout.txt"), "the text block after them");
        let blocks: Vec<usize> = runs.iter().map(|r| r.source.block).collect();
        assert_eq!(blocks, (1..=runs.len()).collect::<Vec<_>>());
    }
}

#[test]
fn a_text_log_with_json_records_and_no_block_is_nothing_found() {
    let text =
        "{\"level\":\"info\",\"msg\":\"starting\"}\nINFO 08-28 22:41:28 server up\n{\"level\":\"info\",\"msg\":\"cut\n";
    let e = bench_normalize::normalize_str(text, "no-block.log").unwrap_err();
    assert_eq!(e.exit_code(), bench_normalize::ExitCode::NoResult);
    assert!(e.to_string().contains("no benchmark result found"), "{e}");
}

/// vllm-s2's block with `n` rows no definition knows, in its format, after `Failed requests:`.
fn with_unknown_rows(n: usize) -> String {
    let text = sample_text("captured/vllm-s2.stdout.txt");
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
        if line.starts_with("Failed requests:") {
            for i in 0..n {
                out.push_str(&format!("{:<40} {:<10}\n", format!("Frobnicated widgets {i} (zq):"), i * 3));
            }
        }
    }
    out
}

#[test]
fn a_complete_block_with_many_unknown_rows_is_complete() {
    // 8 or more unknown rows were counted as noise, and the block was rejected as cut off.
    let c = clean("captured/vllm-s2.stdout.txt");
    for n in [8, 12, 50, 300] {
        let runs = bench_normalize::normalize_str(&with_unknown_rows(n), "unknown-rows.log").unwrap();
        assert_eq!(runs.len(), 1, "{n}");
        same_figures(&runs[0], &c, &format!("{n} unknown rows"));
        assert_eq!(runs[0].source.truncated, None, "{n}");
        assert!(runs[0].checks.iter().any(|c| c.id == "complete-block" && c.status == Status::Pass), "{n}");
        let kept: Vec<_> = runs[0].rows.iter().filter(|r| r.label.starts_with("Frobnicated widgets")).collect();
        assert_eq!(kept.len(), n);
        assert!(kept.iter().all(|r| r.field.is_none()));
        assert_eq!(kept[n - 1].value.as_deref(), Some(format!("{}", (n - 1) * 3).as_str()));
    }
}

#[test]
fn a_block_without_its_closing_line_is_still_cut_off_where_its_rows_end() {
    // The closing line is looked for past the unknown rows; it does not come: the block ends at
    // its last known row, as before, and the next run is read as before.
    let c = clean("captured/vllm-s1.stdout.txt");
    let mut text = sample_text("captured/vllm-s2.stdout.txt");
    let cut = text.find("---------------Time to First Token").unwrap();
    text.truncate(cut);
    let last_known = text.lines().count();
    for i in 0..30 {
        text.push_str(&format!("{:<40} {:<10}\n", format!("Frobnicated widgets {i} (zq):"), i));
    }
    text.push_str("Traceback (most recent call last):\n  File \"bench.py\", line 1\nRuntimeError boom\n\n\n\n\n\n\n");
    text.push_str(&sample_text("captured/vllm-s1.stdout.txt"));
    let runs = bench_normalize::normalize_str(&text, "cut.log").unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs[0].source.truncated.is_some());
    assert_eq!(runs[0].source.last_line, Some(last_known));
    assert!(!runs[0].rows.iter().any(|r| r.label.starts_with("Frobnicated")));
    same_figures(&runs[1], &c, "the next run");
    // And when the next banner comes while looking ahead.
    let mut text = sample_text("captured/vllm-s2.stdout.txt");
    text.truncate(cut);
    for i in 0..30 {
        text.push_str(&format!("{:<40} {:<10}\n", format!("Frobnicated widgets {i} (zq):"), i));
    }
    text.push_str(&sample_text("captured/vllm-s1.stdout.txt"));
    let runs = bench_normalize::normalize_str(&text, "cut.log").unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].source.last_line, Some(last_known));
    assert!(runs[0].source.truncated.is_some());
    same_figures(&runs[1], &c, "the next run, after the look-ahead");
}

/// Hands out its chunks one read at a time, and notes how many runs the sink had when each read
/// after the first was asked for.
struct Chunks {
    chunks: Vec<Vec<u8>>,
    at: usize,
    seen: std::rc::Rc<std::cell::Cell<usize>>,
    runs_at_read: Vec<usize>,
}

impl std::io::Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(chunk) = self.chunks.get_mut(self.at) else { return Ok(0) };
        if chunk.is_empty() {
            self.at += 1;
            self.runs_at_read.push(self.seen.get());
            return self.read(buf);
        }
        let n = chunk.len().min(buf.len());
        buf[..n].copy_from_slice(&chunk[..n]);
        chunk.drain(..n);
        Ok(n)
    }
}

#[test]
fn a_stream_whose_first_line_is_a_json_record_gives_each_run_as_its_block_ends() {
    // Read as text a line at a time (not to its end as JSON): `tail -f log | bench-normalize`.
    let first = format!("{{\"level\":\"info\",\"msg\":\"starting\"}}\n{}", sample_text("captured/vllm-s2.stdout.txt"));
    let then = "INFO still running\n".repeat(1000) + &sample_text("captured/vllm-s1.stdout.txt");
    let seen = std::rc::Rc::new(std::cell::Cell::new(0));
    let mut reader = Chunks {
        chunks: vec![first.into_bytes(), then.into_bytes()],
        at: 0,
        seen: seen.clone(),
        runs_at_read: Vec::new(),
    };
    let mut got = Vec::new();
    let n = bench_normalize::normalize(
        std::io::BufReader::new(&mut reader),
        "-",
        &bench_normalize::Options::default(),
        &mut |r: Run| {
            seen.set(seen.get() + 1);
            got.push(r);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(n, 2);
    // The first run was out before the second chunk was read.
    assert_eq!(reader.runs_at_read.first(), Some(&1), "{:?}", reader.runs_at_read);
    same_figures(&got[0], &clean("captured/vllm-s2.stdout.txt"), "first");
    same_figures(&got[1], &clean("captured/vllm-s1.stdout.txt"), "second");
}
